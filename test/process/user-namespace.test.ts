/**
 * Who rhema is on the host inside its own user namespace (user-namespace.ts): the ids handed in,
 * believed only when the process is the namespace's 0 and its uid map says the same.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { namespaceHost } from "../../src/process/user-namespace.js";

test("inside its namespace (uid 0, one line mapping 0 to the host uid) the handed-in ids are the host's", () => {
  assert.deepEqual(namespaceHost("1234:1235", 0, "         0       1234          1\n"), { uid: 1234, gid: 1235 });
});

test("a RHEMA_HOST_ID that the uid map does not bear out changes nothing", () => {
  assert.equal(namespaceHost("1234:1234", 0, "         0          0 4294967295\n"), null, "real root: the host's own map");
  assert.equal(namespaceHost("1234:1234", 1234, "         0       1234          1\n"), null, "not the namespace's 0 (a sandboxed command inheriting the variable)");
  assert.equal(namespaceHost("1234:1234", 0, "         0       999          1\n"), null, "another user's namespace");
  assert.equal(namespaceHost("1234:1234", 0, "0 1234 1\n1 100000 65536\n"), null, "a namespace of many ids is not rhema's");
  assert.equal(namespaceHost("1234", 0, "0 1234 1\n"), null, "not uid:gid");
  assert.equal(namespaceHost(undefined, 0, "0 1234 1\n"), null);
  assert.equal(namespaceHost("1234:1234", 0, null), null, "no map to read");
});

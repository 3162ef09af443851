/**
 * report.html in a real browser (issue 26): a real run of a scripted suite through the built CLI
 * — a long tool result (over the page's 2,000-character preview), a failed check, a policy
 * denial — under a one-cell matrix, so each trial key holds `@`, `=`, `,` and `#`
 * (`suite/fail@model=m,limits=l#1`); its report.html opened from file:// in headless Chromium.
 * Every test fails on a console error, an uncaught error or a request that leaves the page, and
 * saves a screenshot under `.rhema/test-artifacts/browser/` (test/support/report-html-run.ts).
 * Without `chromium` on PATH the file skips, saying why; with RHEMA_REQUIRE_BROWSER=1 (CI, after
 * scripts/ci-install-chromium.sh) it fails. Other kinds of run: report-html-runs.browser.test.ts.
 */
import { after, before, test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser, Page } from "playwright-core";
import { runCli } from "../support/cli.js";
import { launchChromium } from "../support/chromium.js";
import { VIEWER_POLICY, browserOrSkip, listedKeys, openReport as openPage, viewerTask as task } from "../support/report-html-run.js";
import { writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

const { chromium: CHROMIUM, skip } = await browserOrSkip();

const MATRIX = "matrix:\n  model:\n    - { id: m, provider: scripted }\n  limits:\n    - { id: l, maxSteps: 9 }\n";
const KEY = { long: "suite/long@model=m,limits=l#1", fail: "suite/fail@model=m,limits=l#1", deny: "suite/deny@model=m,limits=l#1" };
const deepLink = (key: string, step: number) => `#trial=${encodeURIComponent(key)}&step=${step}`;

let browser: Browser;
let pageUrl: string;
let cleanUps: Array<() => unknown> = [];

before(async () => {
  if (skip) return;
  const root = await tempDir({ after: (fn: () => unknown) => cleanUps.push(fn) });
  await writeFiles(root, {
    "policy.yaml": VIEWER_POLICY,
    "matrix.yaml": MATRIX,
    // seq 1 3000: 13,893 characters, the last line "3000".
    "suite/long.yaml": task("Count to 3000.", `{ call: shell, input: { command: "seq 1 3000" } }`, "counted", "true"),
    "suite/fail.yaml": task("Write out.txt.", `{ call: write_file, input: { path: out.txt, content: "hi" } }`, "written", "grep bye out.txt"),
    "suite/deny.yaml": task("Remove src.", `{ call: shell, input: { command: "rm -rf src" } }`, "could not remove", "true"),
  });
  const run = await runCli(["run", "suite", "--out", "run", "--matrix", "matrix.yaml"], { cwd: root });
  assert.equal(run.code, 1, run.stderr);
  pageUrl = pathToFileURL(join(root, "run", "report.html")).href;
  browser = await launchChromium(CHROMIUM!);
});

after(async () => {
  await browser?.close();
  for (const cleanUp of cleanUps) await cleanUp();
  cleanUps = [];
});

/** The run's page opened at `hash` (support/report-html-run.ts: a screenshot, and no console error or outside request). */
const openReport = (t: TestContext, hash = ""): Promise<Page> => openPage(t, browser, pageUrl + hash, 3);

const activeId = (page: Page) => page.evaluate("document.activeElement && document.activeElement.id");

test("the status filter and the search each find the failing trial", { skip }, async (t) => {
  const page = await openReport(t);
  assert.deepEqual(await listedKeys(page), [KEY.deny, KEY.fail, KEY.long]);
  await page.selectOption("#f-status", "failed");
  assert.deepEqual(await listedKeys(page), [KEY.fail]);
  assert.equal(await page.locator("#shown-count").textContent(), "1 of 3 trials");
  await page.selectOption("#f-status", "");
  await page.fill("#f-search", "grep bye");
  assert.deepEqual(await listedKeys(page), [KEY.fail], "the failing check's command is found");
  await page.locator("#trial-list button").click();
  assert.equal(await page.locator("#detail h2").textContent(), KEY.fail);
  assert.match(await page.locator("#detail").innerText(), /failed the check — exit 1/);
});

test("a deep link opens that trial at that step, though its key holds @, =, , and #", { skip }, async (t) => {
  const page = await openReport(t, deepLink(KEY.deny, 2));
  assert.equal(await page.locator("#detail h2").textContent(), KEY.deny);
  assert.equal(await page.locator(".step.linked").getAttribute("id"), "step-2");
  assert.equal(await activeId(page), "step-2");
  assert.equal(await page.locator('#trial-list button[aria-current="true"] .key').textContent(), KEY.deny);
  assert.match(await page.locator("#step-1").innerText(), /deny by rule 3 \(policy\.yaml:6\): no rm: ever/);
  // Each step's own link is the same deep link, and following one (hashchange) opens it.
  assert.equal(await page.locator("#step-1 h4 a").getAttribute("href"), deepLink(KEY.deny, 1));
  await page.evaluate(`location.hash = ${JSON.stringify(deepLink(KEY.fail, 1))}`);
  await page.locator("#detail h2").filter({ hasText: KEY.fail }).waitFor();
  assert.equal(await page.locator(".step.linked").getAttribute("id"), "step-1");
});

test("a tool result over the preview limit shows its start, and all of it when expanded", { skip }, async (t) => {
  const page = await openReport(t, deepLink(KEY.long, 1));
  const result = page.locator("#step-1 pre").nth(1);
  const preview = (await result.textContent())!;
  assert.ok(preview.startsWith("1\n2\n3\n") && preview.endsWith("…") && preview.length === 2001, preview.slice(-40));
  const more = page.getByRole("button", { name: "show all (13906 characters)" });
  await more.click();
  const whole = (await result.textContent())!;
  assert.ok(whole.startsWith("1\n2\n3\n") && whole.includes("\n2999\n3000\n"), whole.slice(-60));
  assert.equal(whole.length, 13906);
  assert.equal(await page.getByRole("button", { name: "show less" }).getAttribute("aria-expanded"), "true");
});

test("the keyboard: / focuses the search, j and k move between trials, Enter opens one", { skip }, async (t) => {
  const page = await openReport(t);
  await page.keyboard.press("/");
  assert.equal(await activeId(page), "f-search");
  assert.equal(await page.inputValue("#f-search"), "", "the / is not typed into the search");
  await page.locator("h1").click();
  for (const key of ["j", "j", "j", "k"]) await page.keyboard.press(key);
  const focused = () => page.evaluate("document.activeElement.querySelector('.key') && document.activeElement.querySelector('.key').textContent");
  assert.equal(await focused(), KEY.fail);
  await page.keyboard.press("Enter");
  assert.equal(await page.locator("#detail h2").textContent(), KEY.fail);
  assert.equal(await page.evaluate("location.hash"), `#trial=${encodeURIComponent(KEY.fail)}`);
  await page.keyboard.press("k");
  assert.equal(await focused(), KEY.deny);
});

test("axe finds no serious or critical accessibility violation, a trial open and expanded", { skip }, async (t) => {
  const page = await openReport(t, deepLink(KEY.long, 1));
  await page.getByRole("button", { name: /^show all/ }).first().click();
  await page.addScriptTag({ content: (createRequire(import.meta.url)("axe-core") as { source: string }).source });
  const violations = await page.evaluate(`axe.run().then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")) })))`) as Array<{ id: string; impact: string; nodes: string[] }>;
  t.diagnostic(`axe: ${violations.map((v) => `${v.id} (${v.impact})`).join(", ") || "no violations"}`);
  assert.deepEqual(violations.filter((v) => v.impact === "serious" || v.impact === "critical"), []);
});

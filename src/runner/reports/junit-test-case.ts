/**
 * junit-report-builder's `TestCase`, extended where it lacks what rhema's reports need:
 * `<skipped message="…">` (its `skipped()` takes no message), a `line` attribute (it has `file`
 * but no `line`; junit-10-ext.xsd allows both), and the Surefire rerun entries of
 * a repeated task's failed trials — `<flakyFailure>`/`<flakyError>` (the task passed its gate
 * anyway) and `<rerunFailure>`/`<rerunError>` (it did not: the trials after its first failure).
 * Not a second writer: the builder still writes the testcase; its `build()` hands back the
 * xmlbuilder element, and the extension adds to that element. Per the XSD's `rerunType` a rerun
 * entry has a `type` (required), a `message`, and its children in order `stackTrace`,
 * `system-out`, `system-err`; it goes before the testcase's own `system-out`, as Surefire writes it.
 */
import type { TestCase } from "junit-report-builder";

type TestCaseElement = ReturnType<TestCase["build"]>;

/** The Surefire rerun elements: a flaky task's failed trials, or a failed task's other failed trials. */
export type RerunKind = "flakyFailure" | "flakyError" | "rerunFailure" | "rerunError";

/** One rerun entry: `message` (`trial 3/5: …`), `type` (`check` or the error code) and its texts (empty ones are left out). */
export interface RerunEntry {
  kind: RerunKind;
  message: string;
  type: string;
  stackTrace: string;
  systemOut: string;
  systemErr: string;
}

/** A builder testcase with the extensions; every builder method still works on it. */
export interface ExtendedTestCase {
  /** The builder's testcase (for its own methods). */
  node: TestCase;
  /** Marks it skipped, saying why: `<skipped message="…"/>` (counted as skipped by the builder). */
  skipped(message: string): ExtendedTestCase;
  /** Adds a rerun entry (not counted by the builder: the testcase's verdict is its failure/error or none). */
  rerun(entry: RerunEntry): ExtendedTestCase;
  /** Sets `line="…"`: where in its `file` the test is written. */
  line(line: number): ExtendedTestCase;
}

/** `node`, extended: its `build()` then adds the extensions' attributes and elements. */
export function extendTestCase(node: TestCase): ExtendedTestCase {
  let skipMessage: string | null = null;
  let lineNumber: number | null = null;
  const reruns: RerunEntry[] = [];
  const build = node.build.bind(node);
  node.build = (parent) => {
    const element = build(parent);
    if (lineNumber !== null) element.att("line", String(lineNumber));
    if (skipMessage !== null) childNamed(element, "skipped")?.att("message", skipMessage);
    for (const entry of reruns) addRerun(element, entry);
    return element;
  };
  const extended: ExtendedTestCase = {
    node,
    skipped(message) {
      node.skipped();
      skipMessage = message;
      return extended;
    },
    rerun(entry) {
      reruns.push(entry);
      return extended;
    },
    line(line) {
      lineNumber = line;
      return extended;
    },
  };
  return extended;
}

/** The rerun element, before the testcase's system-out when it has one (Surefire's order), else last. */
function addRerun(testCase: TestCaseElement, entry: RerunEntry): void {
  const attributes = { message: entry.message, type: entry.type };
  const systemOut = childNamed(testCase, "system-out");
  const element = systemOut !== undefined ? systemOut.insertBefore(entry.kind, attributes) : testCase.ele(entry.kind, attributes);
  if (entry.stackTrace !== "") element.ele("stackTrace").dat(entry.stackTrace);
  if (entry.systemOut !== "") element.ele("system-out").dat(entry.systemOut);
  if (entry.systemErr !== "") element.ele("system-err").dat(entry.systemErr);
}

/** The builder's child element of that name. */
function childNamed(element: TestCaseElement, name: string): TestCaseElement | undefined {
  const children = (element as unknown as { children: Array<TestCaseElement & { name?: string }> }).children;
  return children.find((child) => child.name === name);
}

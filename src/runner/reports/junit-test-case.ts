/**
 * junit-report-builder's `TestCase`, extended where it lacks what rhema's reports need — today
 * `<skipped message="…">` (its `skipped()` takes no message). Not a second writer: the builder
 * still writes the testcase; its `build()` hands back the xmlbuilder element, and the extension
 * adds to that element. Later elements (`flakyFailure`, `rerunFailure`) are added the same way.
 */
import type { TestCase } from "junit-report-builder";

type TestCaseElement = ReturnType<TestCase["build"]>;

/** A builder testcase with the extensions; every builder method still works on it. */
export interface ExtendedTestCase {
  /** The builder's testcase (for its own methods). */
  node: TestCase;
  /** Marks it skipped, saying why: `<skipped message="…"/>` (counted as skipped by the builder). */
  skipped(message: string): ExtendedTestCase;
}

/** `node`, extended: its `build()` then adds the extensions' attributes and elements. */
export function extendTestCase(node: TestCase): ExtendedTestCase {
  let skipMessage: string | null = null;
  const build = node.build.bind(node);
  node.build = (parent) => {
    const element = build(parent);
    if (skipMessage !== null) skippedElement(element)?.att("message", skipMessage);
    return element;
  };
  const extended: ExtendedTestCase = {
    node,
    skipped(message) {
      node.skipped();
      skipMessage = message;
      return extended;
    },
  };
  return extended;
}

/** The `<skipped>` child the builder wrote. */
function skippedElement(element: TestCaseElement): TestCaseElement | undefined {
  const children = (element as unknown as { children: Array<TestCaseElement & { name?: string }> }).children;
  return children.find((child) => child.name === "skipped");
}

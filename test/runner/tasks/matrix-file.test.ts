/**
 * The matrix file's cell budgets (issue 22): an `include` entry's `budget` caps each cell it
 * matches, an entry naming no axis value matches every cell and is never a cell of its own, the
 * smallest of several holds; bad budgets are located errors.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { MatrixFileError, parseMatrixText } from "../../../src/runner/tasks/matrix-file.js";

const AXES = `matrix:
  model:
    - { id: a, provider: scripted, priceAs: claude-sonnet-4-6 }
    - { id: b, provider: scripted, priceAs: claude-haiku-4-5 }
  sandbox:
    - { id: off, mode: off }
    - { id: auto, mode: auto }
`;

const budgets = (text: string) => parseMatrixText(text, "/m/matrix.yaml").cells.map((c) => [c.id, c.budget ?? null]);

test("an include entry's budget caps every cell it matches; one naming no axis caps them all; the smallest holds", () => {
  assert.deepEqual(budgets(`${AXES}  include:
    - { model: a, budget: { maxCostUsd: 2 } }
    - { model: a, sandbox: off, budget: { maxCostUsd: 0.5, maxTokens: 9000 } }
    - { budget: { maxTokens: 100000 } }
`), [
    ["model=a,sandbox=off", { maxCostUsd: 0.5, maxTokens: 9000 }],
    ["model=a,sandbox=auto", { maxCostUsd: 2, maxTokens: 100000 }],
    ["model=b,sandbox=off", { maxTokens: 100000 }],
    ["model=b,sandbox=auto", { maxTokens: 100000 }],
  ]);
  assert.deepEqual(budgets(AXES).map(([, b]) => b), [null, null, null, null], "no budget named: none");
});

test("an include entry with a budget that matches no cell is a cell of its own, with that budget", () => {
  const text = `${AXES}  exclude:
    - { model: b, sandbox: auto }
  include:
    - { model: b, sandbox: auto, budget: { maxCostUsd: 1 } }
`;
  assert.deepEqual(budgets(text).at(-1), ["model=b,sandbox=auto", { maxCostUsd: 1 }]);
  assert.equal(budgets(text).length, 4);
});

test("a budget that is empty, not positive or unknown is exit 2 at its line; an empty include entry too", () => {
  const problem = (include: string): string => {
    try {
      parseMatrixText(`${AXES}  include:\n    - ${include}\n`, "/m/matrix.yaml");
    } catch (err) {
      assert.ok(err instanceof MatrixFileError);
      return err.message;
    }
    return assert.fail(`accepted ${include}`);
  };
  assert.match(problem("{ model: a, budget: {} }"), /^\/m\/matrix\.yaml:9:\d+: matrix\.include\.0\.budget: a budget names maxCostUsd or maxTokens/);
  assert.match(problem("{ model: a, budget: { maxCostUsd: 0 } }"), /matrix\.include\.0\.budget\.maxCostUsd: maxCostUsd must be above 0/);
  assert.match(problem("{ model: a, budget: { maxCost: 1 } }"), /unknown key `maxCost`; did you mean `maxCostUsd`\?/);
  assert.match(problem("{ model: a, budget: 5 }"), /matrix\.include\.0\.budget: expected budget as a mapping/);
  assert.match(problem("{}"), /an include entry names at least one axis value, or a budget for every cell/);
});

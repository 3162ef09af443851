/**
 * What the report.html tests share (the CLI e2e test and the browser tests): the policy and the
 * scripted task their suites are made of, the page's embedded data read back, and — for the
 * browser — whether Chromium is here, and a page opened on a report that fails its test on a
 * console error, an uncaught error or a request leaving the page, with a screenshot saved under
 * `.rhema/test-artifacts/browser/` as a test artifact.
 */
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { TestContext } from "node:test";
import type { Browser, Page } from "playwright-core";
import type { HtmlReportData } from "../../src/runner/reports/report-html-data.js";
import { findChromium, watchedPage } from "./chromium.js";
import { repoRoot } from "./paths.js";

/** Shell `seq`, `echo`, `sleep`, `touch` and `true`; writes to out.txt and started; `rm` denied with a reason. */
export const VIEWER_POLICY = `version: 1
default: deny
rules:
  - allow: { shell: ["seq *", "echo *", "sleep *", "touch *", "true"] }
  - allow: { paths: ["out.txt", "started"] }
  - deny: { shell: ["rm *"], reason: "no rm: ever" }
`;

/** A scripted task (policy ../policy.yaml): one step making `call` (YAML flow), then saying `say`; one check running `check`. */
export function viewerTask(prompt: string, call: string, say: string, check: string): string {
  return `prompt: ${prompt}
policy: ../policy.yaml
model:
  provider: scripted
  script:
    - calls:
        - ${call}
    - say: ${say}
checks:
  - { name: the check, run: "${check}" }
`;
}

/** The data block of a report.html, read as a browser reads it: the script element's text runs to the first `</script`. */
export function embeddedData(html: string): HtmlReportData {
  const start = html.indexOf('id="rhema-data"');
  assert.ok(start >= 0, "the page has its data block");
  const open = html.indexOf(">", start) + 1;
  return JSON.parse(html.slice(open, html.indexOf("</script", open))) as HtmlReportData;
}

/** Where the browser tests' screenshots go. */
export const BROWSER_ARTIFACTS = join(repoRoot, ".rhema", "test-artifacts", "browser");

/**
 * Chromium's path, and the `skip` of a browser test: a reason without chromium on PATH; with
 * RHEMA_REQUIRE_BROWSER=1 (CI, after scripts/ci-install-chromium.sh) its absence throws instead.
 */
export async function browserOrSkip(): Promise<{ chromium: string | null; skip: string | false }> {
  const chromium = await findChromium();
  if (chromium === null && process.env.RHEMA_REQUIRE_BROWSER === "1") throw new Error("chromium is required (RHEMA_REQUIRE_BROWSER=1) but is not on PATH");
  return { chromium, skip: chromium === null ? "chromium is not on PATH (scripts/ci-install-chromium.sh installs it)" : false };
}

/**
 * `url` opened in a new page, once its list says "of `trials` trials"; when the test ends a
 * screenshot is saved and no console error, page error or request off the page may have happened.
 */
export async function openReport(t: TestContext, browser: Browser, url: string, trials: number): Promise<Page> {
  const { page, problems } = await watchedPage(browser);
  t.after(async () => {
    await mkdir(BROWSER_ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(BROWSER_ARTIFACTS, `${t.name.replace(/[^a-z0-9]+/gi, "-").slice(0, 60)}.png`), fullPage: true });
    await page.close();
    assert.deepEqual(problems, [], "no console error, page error or request off the page");
  });
  await page.goto(url);
  await page.locator("#shown-count").filter({ hasText: `of ${trials} trials` }).waitFor();
  return page;
}

/** The keys of the trials the list shows, in order. */
export const listedKeys = (page: Page): Promise<string[]> => page.locator("#trial-list .key").allTextContents();

/** Each listed trial as `key status` (the badge's text). */
export async function listedRows(page: Page): Promise<string[]> {
  const rows = page.locator("#trial-list button");
  const out: string[] = [];
  for (let i = 0; i < (await rows.count()); i++) out.push(`${await rows.nth(i).locator(".key").textContent()} ${await rows.nth(i).locator(".badge").textContent()}`);
  return out;
}

/** A task that writes out.txt, then says it waits and runs `touch started && sleep 30`: kill the run once `workspace/started` exists. */
export const WAITING_TASK = `prompt: Write out.txt, then wait.
policy: ../policy.yaml
model:
  provider: scripted
  script:
    - calls:
        - { call: write_file, input: { path: out.txt, content: first } }
    - say: now I wait
      call: shell
      input: { command: "touch started && sleep 30" }
    - say: done
checks:
  - { name: the check, run: "true" }
`;

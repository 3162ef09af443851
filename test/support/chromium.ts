/**
 * Headless Chromium for the browser tests and bench:viewer: the system's `chromium` (Debian's
 * package; scripts/ci-install-chromium.sh installs it in CI) driven by playwright-core, which
 * downloads no browser. A page opened here records what a viewer must never do: a console error,
 * an uncaught error, a request that leaves the page (anything but `file:` and `data:`).
 */
import { chromium, type Browser, type Page } from "playwright-core";
import { findOnPath } from "../../src/process/sandbox-probe.js";

/** The `chromium` executable on PATH, or null. */
export function findChromium(): Promise<string | null> {
  return findOnPath("chromium", process.env.PATH ?? "");
}

/** Chromium started headless from `executablePath` (without its sandbox as root, which it refuses otherwise). */
export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, args: process.getuid?.() === 0 ? ["--no-sandbox"] : [] });
}

/** A new page whose `problems` collects console errors, page errors and requests that leave the page, each as one line. */
export async function watchedPage(browser: Browser): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const problems: string[] = [];
  page.on("console", (message) => { if (message.type() === "error") problems.push(`console error: ${message.text()}`); });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("request", (request) => { if (!/^(file|data):/.test(request.url())) problems.push(`request: ${request.url()}`); });
  return { page, problems };
}

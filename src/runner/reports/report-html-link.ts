/**
 * Where report.html shows a trial: the page's deep link, `#trial=<encodeURIComponent(key)>`
 * (`&step=N` for a step). A trial key holds `#`, `=` and `,` (`suite/id@variant#repeat`), so the
 * key is always encoded whole. JUnit's system-out and the summary point at it with these.
 */
import { RUN_FILES } from "../run-dir/run-dir.js";
import { trialKeyText } from "./report-html-data.js";

/** Where the page of the run directory `runDirShown` (as reports show it) shows the trial of `entry`. */
export function reportLink(runDirShown: string, entry: Parameters<typeof trialKeyText>[0]): string {
  return `${runDirShown}/${RUN_FILES.html}${reportFragment(entry)}`;
}

/** The page's fragment for the trial of `entry` (at `step` when given). */
export function reportFragment(entry: Parameters<typeof trialKeyText>[0], step?: number): string {
  return `#trial=${encodeURIComponent(trialKeyText(entry))}${step === undefined ? "" : `&step=${step}`}`;
}

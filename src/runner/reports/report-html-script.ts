/**
 * The viewer's inline style and script, as text the page embeds (report-html.ts). The script
 * reads the data block, renders the trial list in chunks (a frame at a time) and a trial's
 * steps only when it is opened, 50 at a time as they scroll into view (or "show more"); every value is put in the page
 * as text (`textContent`), never as markup. Deep links: `#trial=<encodeURIComponent(key)>&step=N`.
 * Keys: j/k move between trials, Enter opens, / focuses the search.
 */

/** The deep-link functions, as the page runs them; a test evaluates this same text. */
export const DEEP_LINK_SCRIPT = `function deepLinkOf(key, step) {
  return "#trial=" + encodeURIComponent(key) + (step == null ? "" : "&step=" + step);
}
function parseDeepLink(hash) {
  var out = { trial: null, step: null };
  hash.replace(/^#/, "").split("&").forEach(function (part) {
    var at = part.indexOf("=");
    if (at < 0) return;
    var name = part.slice(0, at), value;
    try { value = decodeURIComponent(part.slice(at + 1)); } catch (e) { return; }
    if (name === "trial") out.trial = value;
    if (name === "step" && /^[0-9]+$/.test(value)) out.step = Number(value);
  });
  return out;
}`;

export const VIEWER_STYLE = `
:root { color-scheme: light; --fg: #1a1a1a; --muted: #555; --line: #ccc; --bg: #fff; --pane: #f5f5f5;
  --pass: #0a6b2a; --fail: #a4141e; --err: #8a4b00; --stop: #4a4a8a; --focus: #0b57d0; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header { padding: .75rem 1rem; border-bottom: 1px solid var(--line); }
h1 { font-size: 1.2rem; margin: 0 0 .3rem; } h2 { font-size: 1.05rem; margin: 1rem 0 .4rem; } h3 { font-size: .95rem; margin: .6rem 0 .3rem; }
.figures { display: flex; flex-wrap: wrap; gap: .4rem 1.2rem; margin: 0; }
.figures div { display: flex; gap: .3rem; } .figures dt { color: var(--muted); } .figures dd { margin: 0; font-weight: 600; }
main { display: grid; grid-template-columns: minmax(18rem, 30%) 1fr; height: calc(100vh - 5.5rem); }
#list-pane { border-right: 1px solid var(--line); display: flex; flex-direction: column; min-height: 0; }
#filters { padding: .5rem; display: flex; flex-wrap: wrap; gap: .4rem; background: var(--pane); border-bottom: 1px solid var(--line); }
#filters label { display: flex; align-items: center; gap: .25rem; }
#trial-list { list-style: none; margin: 0; padding: 0; overflow-y: auto; flex: 1; }
#trial-list button { width: 100%; text-align: left; border: 0; border-bottom: 1px solid #e4e4e4; background: none; padding: .35rem .6rem; font: inherit; color: inherit; cursor: pointer; display: flex; gap: .5rem; }
#trial-list button[aria-current="true"] { background: #e3ecfa; }
#trial-list button:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, summary:focus-visible { outline: 2px solid var(--focus); outline-offset: 1px; }
.key { word-break: break-all; }
.badge { font-size: .75rem; font-weight: 700; padding: 0 .35rem; border-radius: .2rem; color: #fff; flex: none; align-self: flex-start; }
.passed { background: var(--pass); } .failed { background: var(--fail); } .errored { background: var(--err); } .stopped { background: var(--stop); }
.interrupted { background: #6b4e00; } .not_started, .not_selected, .gate_decided { background: #595959; }
.tag { font-size: .75rem; border: 1px solid var(--muted); border-radius: .2rem; padding: 0 .25rem; color: var(--muted); flex: none; align-self: flex-start; }
#detail { overflow-y: auto; padding: .5rem 1rem 2rem; min-height: 0; overflow-anchor: none; } /* steps rendered above the checks must not scroll the pane along */
pre { background: var(--pane); border: 1px solid #ddd; padding: .4rem .5rem; overflow-x: auto; white-space: pre-wrap; word-break: break-word; margin: .25rem 0; font: 12.5px/1.4 ui-monospace, monospace; }
.step { border: 1px solid var(--line); border-radius: .3rem; padding: .3rem .6rem; margin: .5rem 0; }
.step:target, .step.linked { outline: 3px solid var(--focus); }
.meta { color: var(--muted); font-size: .85rem; }
.deny { color: var(--fail); font-weight: 600; } .allow { color: var(--pass); }
.diff-add { color: var(--pass); } .diff-del { color: var(--fail); }
.more { margin: .3rem 0; font: inherit; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
`;

export const VIEWER_SCRIPT = `(function () {
"use strict";
${DEEP_LINK_SCRIPT}
var data = JSON.parse(document.getElementById("rhema-data").textContent);
var trials = data.trials;
var LIST_CHUNK = 100, STEP_CHUNK = 50, PREVIEW_CHARS = 2000;
function $(id) { return document.getElementById(id); }
function el(tag, attrs, kids) {
  var node = document.createElement(tag);
  if (attrs) Object.keys(attrs).forEach(function (k) { if (k === "text") node.textContent = attrs[k]; else node.setAttribute(k, attrs[k]); });
  (kids || []).forEach(function (kid) { if (kid != null) node.appendChild(typeof kid === "string" ? document.createTextNode(kid) : kid); });
  return node;
}
function statusText(status) { return status.replace(/_/g, " "); }
function isFinished(t) { return ["passed", "failed", "errored", "stopped"].indexOf(t.status) >= 0; }
function usd(v) { return v == null ? "unpriced" : "$" + v.toFixed(4); }
function ms(v) { return v == null ? "" : v < 1000 ? v + " ms" : (v / 1000).toFixed(1) + " s"; }
function pct(v) { return v == null ? "–" : Math.round(v * 100) + " %"; }
function longText(text, cls) {
  if (text.length <= PREVIEW_CHARS) return el("pre", { "class": cls || "", text: text });
  var pre = el("pre", { "class": cls || "", text: text.slice(0, PREVIEW_CHARS) + "…" });
  var button = el("button", { type: "button", "class": "more", "aria-expanded": "false", text: "show all (" + text.length + " characters)" });
  button.addEventListener("click", function () {
    var all = button.getAttribute("aria-expanded") === "false";
    pre.textContent = all ? text : text.slice(0, PREVIEW_CHARS) + "…";
    button.setAttribute("aria-expanded", String(all));
    button.textContent = all ? "show less" : "show all (" + text.length + " characters)";
  });
  return el("div", null, [pre, button]);
}
var suites = [];
trials.forEach(function (t) { if (suites.indexOf(t.suite) < 0) suites.push(t.suite); });
suites.sort().forEach(function (s) { $("f-suite").appendChild(el("option", { value: s, text: s })); });
var haystacks = null;
var shown = [], cursor = -1, listToken = 0, openKey = null, stepsObserver = null, openToken = 0;
function matches(t, i, q) {
  if ($("f-status").value && t.status !== $("f-status").value) return false;
  if ($("f-suite").value && t.suite !== $("f-suite").value) return false;
  if ($("f-flaky").checked && !t.flaky) return false;
  if ($("f-denied").checked && t.denials === 0) return false;
  if (!q) return true;
  if (!haystacks) haystacks = trials.map(function (x) { return JSON.stringify(x).toLowerCase(); });
  return haystacks[i].indexOf(q) >= 0;
}
function renderList() {
  var q = $("f-search").value.trim().toLowerCase();
  shown = [];
  trials.forEach(function (t, i) { if (matches(t, i, q)) shown.push(i); });
  $("shown-count").textContent = shown.length + " of " + trials.length + " trials";
  var list = $("trial-list");
  list.textContent = "";
  cursor = -1;
  var token = ++listToken, at = 0;
  (function chunk() {
    if (token !== listToken) return;
    var end = Math.min(at + LIST_CHUNK, shown.length);
    for (; at < end; at++) list.appendChild(row(shown[at], at));
    if (at < shown.length) requestAnimationFrame(chunk);
  })();
}
function row(i, position) {
  var t = trials[i];
  var button = el("button", { type: "button", "data-pos": String(position), "aria-current": String(t.key === openKey) }, [
    el("span", { "class": "badge " + t.status, text: statusText(t.status) }),
    el("span", { "class": "key", text: t.key }),
    t.flaky ? el("span", { "class": "tag", text: "flaky" }) : null,
    t.denials ? el("span", { "class": "tag", text: t.denials + " denied" }) : null,
  ]);
  button.addEventListener("click", function () { cursor = position; openTrial(t.key, null, true); });
  return el("li", null, [button]);
}
function figure(name, value) { return el("div", null, [el("dt", { text: name }), el("dd", { text: String(value) })]); }
function openTrial(key, step, updateHash) {
  var t = null;
  for (var i = 0; i < trials.length; i++) if (trials[i].key === key) t = trials[i];
  var detail = $("detail");
  detail.textContent = "";
  if (!t) { detail.appendChild(el("p", { text: "No trial " + key + " in this run." })); return; }
  openKey = key;
  Array.prototype.forEach.call(document.querySelectorAll("#trial-list button"), function (b) {
    b.setAttribute("aria-current", String(shown[Number(b.getAttribute("data-pos"))] === trials.indexOf(t)));
  });
  if (updateHash) history.replaceState(null, "", deepLinkOf(key, null));
  detail.appendChild(el("h2", { text: t.key }));
  detail.appendChild(el("dl", { "class": "figures" }, [
    figure("status", statusText(t.status)), figure("duration", ms(t.durationMs)), figure("started", t.startedAt), figure("finished", t.finishedAt),
    figure("steps", t.steps.length), figure("cost", usd(t.costUsd)), figure("tokens", t.tokens == null ? "–" : t.tokens), figure("cache hit", pct(t.cacheHitRate)),
    figure("denials", t.denials), t.flaky ? figure("flaky", "yes") : null,
  ]));
  if (t.error) detail.appendChild(el("p", { "class": "deny", text: "error " + t.error.code + ": " + t.error.message }));
  t.notes.forEach(function (n) { detail.appendChild(el("p", { "class": "meta", text: n })); });
  // A trial without a result shows what it did so far (nothing, never started): no checks, answer or changes yet.
  var finished = isFinished(t);
  if (!finished && t.prompt == null && t.steps.length === 0) { detail.focus(); return; }
  detail.appendChild(el("h3", { text: "Prompt" }));
  detail.appendChild(t.prompt == null ? el("p", { "class": "meta", text: "(no checkpoint: see events.jsonl)" }) : longText(t.prompt));
  detail.appendChild(el("h3", { text: finished ? "Steps" : "Steps so far" }));
  var stepsBox = el("div"), rendered = 0;
  var more = el("button", { type: "button", "class": "more" });
  function renderSteps(upTo) {
    var end = Math.min(Math.max(upTo, rendered + STEP_CHUNK), t.steps.length);
    for (; rendered < end; rendered++) stepsBox.appendChild(stepNode(t, t.steps[rendered]));
    more.hidden = rendered >= t.steps.length;
    more.textContent = "show more steps (" + (t.steps.length - rendered) + " left)";
  }
  more.addEventListener("click", function () { renderSteps(0); });
  detail.appendChild(stepsBox);
  detail.appendChild(more);
  // Scrolling near the end renders the next steps; the button stays for the keyboard. Observed
  // afresh after each chunk: an observer reports changes only, and the button can still be in view.
  if (stepsObserver) stepsObserver.disconnect();
  stepsObserver = new IntersectionObserver(function (entries, observer) {
    if (!entries.some(function (e) { return e.isIntersecting; }) || rendered >= t.steps.length) return;
    renderSteps(0);
    observer.unobserve(more);
    observer.observe(more);
  }, { root: detail, rootMargin: "0px 0px 600px 0px" });
  stepsObserver.observe(more);
  var target = step == null ? -1 : t.steps.findIndex(function (s) { return s.n === step; });
  renderSteps(0);
  var token = ++openToken;
  // A linked step past the first chunk is reached a chunk a frame (all at once is a long task).
  (function reveal() {
    if (token !== openToken) return;
    if (target < 0) { detail.focus(); return; }
    if (rendered <= target) { renderSteps(0); requestAnimationFrame(reveal); return; }
    var node = document.getElementById("step-" + step);
    if (node) { node.classList.add("linked"); node.scrollIntoView(); node.focus(); }
  })();
  if (!finished) return;
  detail.appendChild(el("h3", { text: "Checks" }));
  if (t.checks.length === 0) detail.appendChild(el("p", { "class": "meta", text: "none" }));
  t.checks.forEach(function (c) {
    detail.appendChild(el("p", null, [el("span", { "class": c.passed ? "allow" : "deny", text: c.passed ? "passed" : "failed" }),
      " " + c.name + " — " + (c.notRun || ("exit " + (c.exitCode == null ? "signal" : c.exitCode) + " in " + ms(c.durationMs)))]));
    detail.appendChild(el("pre", { text: "$ " + c.command }));
    if (c.output) detail.appendChild(longText(c.output));
  });
  detail.appendChild(el("h3", { text: "Final answer" }));
  detail.appendChild(longText(t.finalAnswer || "(empty)"));
  if (t.output != null) {
    detail.appendChild(el("h3", { text: "Structured answer (output.json)" }));
    detail.appendChild(longText(t.output));
  }
  detail.appendChild(el("h3", { text: "Changes" }));
  detail.appendChild(t.patch == null ? el("p", { "class": "meta", text: "no changes.patch" }) : patchNode(t.patch));
}
function stepNode(t, s) {
  var box = el("section", { "class": "step", id: "step-" + s.n, tabindex: "-1", "aria-label": "step " + s.n }, [
    el("h4", null, [el("a", { href: deepLinkOf(t.key, s.n), text: "step " + s.n }),
      el("span", { "class": "meta", text: (s.at ? "  " + s.at : "") + (s.stop ? "  stop: " + s.stop : "") })]),
  ]);
  if (s.usage) {
    var u = s.usage;
    box.appendChild(el("p", { "class": "meta", text: "tokens in " + u.inputTokens + ", cache read " + u.cacheReadTokens + ", cache write " + u.cacheWriteTokens +
      ", out " + u.outputTokens + (s.costUsd === undefined ? "" : ", cost " + usd(s.costUsd)) }));
  }
  s.flushes.forEach(function (f) { box.appendChild(el("p", { "class": "meta", text: "flush: " + f })); });
  s.notes.forEach(function (n) { box.appendChild(el("p", { "class": "meta", text: n })); });
  if (s.text) box.appendChild(longText(s.text));
  s.calls.forEach(function (c) {
    var d = c.decision;
    box.appendChild(el("p", null, ["tool ", el("strong", { text: c.name }),
      d ? el("span", { "class": d.decision, text: "  " + d.decision + (d.rule ? " by " + d.rule : "") + (d.reason ? ": " + d.reason : "") }) : null,
      c.durationMs == null ? null : el("span", { "class": "meta", text: "  " + ms(c.durationMs) })]));
    box.appendChild(longText(c.input));
    if (c.result != null) box.appendChild(longText(c.result, c.isError ? "deny" : ""));
  });
  return box;
}
function patchNode(patch) {
  var pre = el("pre");
  patch.split("\\n").slice(0, 5000).forEach(function (line) {
    var cls = line.charAt(0) === "+" && line.indexOf("+++") !== 0 ? "diff-add" : line.charAt(0) === "-" && line.indexOf("---") !== 0 ? "diff-del" : null;
    pre.appendChild(cls ? el("span", { "class": cls, text: line }) : document.createTextNode(line));
    pre.appendChild(document.createTextNode("\\n"));
  });
  return pre;
}
function move(by) {
  if (shown.length === 0) return;
  cursor = Math.max(0, Math.min(shown.length - 1, cursor + by));
  var list = $("trial-list");
  while (list.children.length <= cursor) list.appendChild(row(shown[list.children.length], list.children.length));
  list.children[cursor].firstChild.focus();
}
["f-status", "f-suite", "f-flaky", "f-denied"].forEach(function (id) { $(id).addEventListener("change", renderList); });
$("f-search").addEventListener("input", renderList);
document.addEventListener("keydown", function (e) {
  var typing = /^(INPUT|SELECT|TEXTAREA)$/.test(e.target.tagName);
  if (e.key === "/" && !typing) { e.preventDefault(); $("f-search").focus(); return; }
  if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === "j") { e.preventDefault(); move(1); }
  else if (e.key === "k") { e.preventDefault(); move(-1); }
  else if (e.key === "Enter" && cursor >= 0 && e.target.tagName !== "BUTTON" && e.target.tagName !== "A") openTrial(trials[shown[cursor]].key, null, true);
});
function followHash() {
  var link = parseDeepLink(location.hash);
  if (link.trial != null) openTrial(link.trial, link.step, false);
}
window.addEventListener("hashchange", followHash);
renderList();
followHash();
})();`;

/**
 * Charts as files: a Vega-Lite spec compiled and rendered to SVG headless by Vega (no canvas, no
 * browser), written as output-file.ts writes. The machinery `bench replay --chart` and `report compare --chart` share; each owns its spec.
 */
import type { TopLevelSpec } from "vega-lite";
import { writeOutputFile } from "./output-file.js";

/** Renders `spec` to SVG at `path`. */
export async function renderVegaLiteSvg(spec: TopLevelSpec, path: string): Promise<void> {
  const [vega, vegaLite] = await Promise.all([import("vega"), import("vega-lite")]);
  const compiled = vegaLite.compile(spec).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: "none" });
  const svg = await view.toSVG();
  view.finalize();
  await writeOutputFile(path, svg);
}

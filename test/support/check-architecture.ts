/**
 * rhema's architecture as a checker: `checkArchitecture(srcDir)` reads every `.ts` file under
 * `srcDir` with the TypeScript compiler API and returns each way the tree breaks docs/design.md §2 —
 * an import against the layer table (static, type-only, dynamic or `require`), an import cycle,
 * a file in no layer, a file in `core` that imports the file system, processes or sockets, and
 * an edge-only use of `process` or `console` below the edges (cli, action) — and inside the
 * layers that have rooms (`runner/`, `policy/`: rooms.ts), a file in no room, an import against
 * the room table and rooms that import each other round a loop. The real tree's test and the
 * fixture trees that prove each rule fails both go through it.
 */
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, sep } from "node:path";
import ts from "typescript";
import { ambientUses } from "./ambient-access.js";
import { type ImportKind, type ImportSite, importSites, isRelative, resolveRelative } from "./import-graph.js";
import { ROOMS, type RoomTable, mayImportRoom, roomOf } from "./rooms.js";

export type Layer =
  | "core" | "cache" | "store" | "process" | "mcp" | "prompt" | "yaml-source" | "policy" | "tools" | "transcript" | "providers" | "tokens"
  | "agent" | "runner" | "index" | "cli" | "action";

/** The library's layers below index and the edges, and what each may import besides itself. */
const INNER: Record<Exclude<Layer, "index" | "cli" | "action">, readonly Layer[]> = {
  core: [],
  cache: ["core"],
  store: ["core"],
  process: ["core"],
  prompt: ["core"],
  "yaml-source": ["core"],
  policy: ["core", "yaml-source"],
  tools: ["core", "process"],
  mcp: ["core", "process"],
  transcript: ["core", "cache"],
  providers: ["core", "cache"],
  tokens: ["core"],
  agent: ["core", "tools", "transcript", "prompt", "store"],
  runner: ["core", "agent", "policy", "providers", "store", "process", "mcp", "transcript", "cache", "yaml-source", "tokens"],
};
const LIBRARY = Object.keys(INNER) as Layer[];

/** docs/design.md §2: who may import whom. The edges import anything but each other; nothing imports them. */
export const MAY_IMPORT: Readonly<Record<Layer, readonly Layer[]>> = {
  ...INNER,
  index: LIBRARY,
  cli: [...LIBRARY, "index"],
  action: [...LIBRARY, "index"],
};
const EDGES: ReadonlySet<Layer> = new Set(["cli", "action"]);
/** What `core` may not import: it holds types, ports and pure logic. */
const CORE_FORBIDDEN = new Set(["fs", "fs/promises", "child_process", "net"].flatMap((m) => [m, `node:${m}`]));

/** One way the tree breaks the architecture. Files are relative to the source folder, `/`-separated. */
export type Violation =
  | { rule: "unknown-layer"; file: string }
  | { rule: "layer"; file: string; line: number; kind: ImportKind; target: string; from: Layer; to: Layer }
  | { rule: "unresolved-import"; file: string; line: number; kind: ImportKind; specifier: string }
  | { rule: "outside-source"; file: string; line: number; kind: ImportKind; specifier: string }
  | { rule: "computed-import"; file: string; line: number; kind: ImportKind }
  | { rule: "core-io"; file: string; line: number; kind: ImportKind; specifier: string }
  | { rule: "cycle"; files: string[] }
  | { rule: "ambient"; file: string; line: number; object: "process" | "console"; member: string }
  | { rule: "unknown-room"; file: string; layer: string }
  | { rule: "room"; file: string; line: number; kind: ImportKind; target: string; layer: string; from: string; to: string }
  | { rule: "room-cycle"; layer: string; rooms: string[] }
  | { rule: "stale-known-import"; file: string; target: string };

/** An import the room table forbids that the tree is known to make today: `file` imports `target`. */
export interface KnownImport {
  file: string;
  target: string;
}

export interface ArchitectureOptions {
  /** The rooms of the layers that have them; rooms.ts's `ROOMS` unless a fixture brings its own. */
  rooms?: RoomTable;
  /**
   * Wrong-way room imports tolerated until they are moved: each is left out of the room rules
   * (and of the rooms' cycles); one that is no wrong-way import of the tree (gone, or allowed)
   * is itself a violation, so the list stays exact.
   */
  knownRoomImports?: readonly KnownImport[];
}

/** The layer a source file (relative to the source folder) sits in, or `null`. */
export function layerOf(rel: string): Layer | null {
  const parts = rel.split(/[\\/]/);
  if (parts.length === 1) return rel === "agent.ts" ? "agent" : rel === "index.ts" ? "index" : null;
  const top = parts[0] as Layer;
  return top in MAY_IMPORT && top !== "agent" && top !== "index" ? top : null;
}

export function mayImport(from: Layer, to: Layer): boolean {
  return from === to || MAY_IMPORT[from].includes(to);
}

/** Every violation in the tree under `srcDir`, sorted by file and line; `[]` for a sound tree. */
export function checkArchitecture(srcDir: string, options: ArchitectureOptions = {}): Violation[] {
  const rooms = options.rooms ?? ROOMS;
  const known = options.knownRoomImports ?? [];
  const files = sourceFiles(srcDir);
  const inTree = new Set(files);
  const program = sourceProgram(files);
  const checker = program.getTypeChecker();
  const rel = (path: string): string => relative(srcDir, path).split(sep).join("/");
  const violations: Violation[] = [];
  const graph = new Map<string, Set<string>>();
  for (const path of files) {
    const file = rel(path);
    const layer = layerOf(file);
    if (layer === null) violations.push({ rule: "unknown-layer", file });
    const source = program.getSourceFile(path);
    if (!source) throw new Error(`architecture check: ${file} is not in the program`);
    const targets = new Set<string>();
    graph.set(file, targets);
    for (const site of importSites(source)) {
      const judged = judgeImport(site, { path, file, layer }, inTree, rel);
      if (judged.violation) violations.push(judged.violation);
      if (judged.target === undefined) continue;
      targets.add(judged.target);
      const wrongWay = judgeRoomImport(site, file, judged.target, rooms, known);
      if (wrongWay) violations.push(wrongWay);
    }
    if (layer === null || !EDGES.has(layer)) {
      for (const use of ambientUses(source, checker)) violations.push({ rule: "ambient", file, ...use });
    }
  }
  for (const cycle of importCycles(graph)) violations.push({ rule: "cycle", files: cycle });
  violations.push(...roomViolations(graph, rooms, known));
  return violations.sort(byPlace);
}

/**
 * The room rules over the whole file graph (each import site is judged against the table by
 * `judgeRoomImport`): each file of a layer with rooms sits in one, and the rooms' own graph has
 * no loop, known wrong-way imports left out. A known import that is no wrong-way import of the
 * graph is stale.
 */
function roomViolations(graph: ReadonlyMap<string, ReadonlySet<string>>, rooms: RoomTable, known: readonly KnownImport[]): Violation[] {
  const violations: Violation[] = [];
  const roomGraph = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const room = roomOf(rooms, file);
    if (room === undefined) continue;
    const layer = file.slice(0, file.indexOf("/"));
    if (room === null) {
      violations.push({ rule: "unknown-room", file, layer });
      continue;
    }
    for (const target of targets) {
      const between = roomsOf(file, target, rooms);
      if (between === null || (isKnown(known, file, target) && isWrongWay(file, target, rooms))) continue;
      const edges = roomGraph.get(`${layer}/${room}`) ?? new Set<string>();
      roomGraph.set(`${layer}/${room}`, edges.add(`${layer}/${between.to}`));
    }
  }
  for (const cycle of importCycles(roomGraph)) {
    const layer = cycle[0]!.slice(0, cycle[0]!.indexOf("/"));
    violations.push({ rule: "room-cycle", layer, rooms: cycle.map((r) => r.slice(layer.length + 1)) });
  }
  for (const k of known) {
    if (!isWrongWay(k.file, k.target, rooms) || !graph.get(k.file)?.has(k.target)) violations.push({ rule: "stale-known-import", file: k.file, target: k.target });
  }
  return violations;
}

interface Importer { path: string; file: string; layer: Layer | null }

/**
 * Files that run other code and hand it a `require` of their own, so they require what that
 * code names: the executable's bundle loader. Those ids are the bundle's (its chunks, Node's
 * modules), never a file of this tree, so the layer check has nothing to follow there.
 */
const RUNS_OTHER_CODE: ReadonlySet<string> = new Set(["cli/code-cache.ts"]);

/** What one import site breaks, if anything, and the source file it reaches, if one. */
function judgeImport(site: ImportSite, from: Importer, inTree: ReadonlySet<string>, rel: (path: string) => string): { violation?: Violation; target?: string } {
  const { kind, line, specifier } = site;
  const { file, layer } = from;
  if (specifier === null) {
    return kind === "require" && RUNS_OTHER_CODE.has(file) ? {} : { violation: { rule: "computed-import", file, line, kind } };
  }
  if (!isRelative(specifier)) {
    return layer === "core" && CORE_FORBIDDEN.has(specifier) ? { violation: { rule: "core-io", file, line, kind, specifier } } : {};
  }
  const resolved = resolveRelative(specifier, kind, from.path, OPTIONS);
  if (resolved === null) return { violation: { rule: "unresolved-import", file, line, kind, specifier } };
  if (!inTree.has(resolved)) return { violation: { rule: "outside-source", file, line, kind, specifier } };
  const target = rel(resolved);
  const to = layerOf(target);
  if (layer === null || to === null || mayImport(layer, to)) return { target };
  return { target, violation: { rule: "layer", file, line, kind, target, from: layer, to } };
}

const isKnown = (known: readonly KnownImport[], file: string, target: string): boolean =>
  known.some((k) => k.file === file && k.target === target);

/** The rooms of an import between two rooms of one layer, or null when it is not one. */
function roomsOf(file: string, target: string, rooms: RoomTable): { layer: string; from: string; to: string } | null {
  const layer = file.slice(0, file.indexOf("/"));
  const from = roomOf(rooms, file);
  const to = roomOf(rooms, target);
  if (!from || !to || from === to || !target.startsWith(`${layer}/`)) return null;
  return { layer, from, to };
}

function isWrongWay(file: string, target: string, rooms: RoomTable): boolean {
  const between = roomsOf(file, target, rooms);
  return between !== null && !mayImportRoom(rooms, between.layer, between.from, between.to);
}

/** A room violation for an import between two rooms of one layer that the table does not allow, unless it is known. */
function judgeRoomImport(site: ImportSite, file: string, target: string, rooms: RoomTable, known: readonly KnownImport[]): Violation | undefined {
  const between = roomsOf(file, target, rooms);
  if (between === null || !isWrongWay(file, target, rooms) || isKnown(known, file, target)) return undefined;
  return { rule: "room", file, line: site.line, kind: site.kind, target, ...between };
}

/** One line per violation, for an assertion message a person can act on. */
export function describeViolation(v: Violation): string {
  switch (v.rule) {
    case "unknown-layer": return `${v.file} sits in no layer of docs/design.md §2`;
    case "layer": return `${v.file}:${v.line} (${v.from}) has a ${v.kind} import of ${v.target} (${v.to}): ${v.from} may not import ${v.to}`;
    case "unresolved-import": return `${v.file}:${v.line} has a ${v.kind} import of "${v.specifier}", which names no file`;
    case "outside-source": return `${v.file}:${v.line} has a ${v.kind} import of "${v.specifier}", outside the source folder`;
    case "computed-import": return `${v.file}:${v.line} has a ${v.kind} import of a computed path, which the layer check cannot follow`;
    case "core-io": return `${v.file}:${v.line} (core) imports "${v.specifier}": core does no file, process or network I/O`;
    case "cycle": return `import cycle: ${[...v.files, v.files[0]].join(" → ")}`;
    case "ambient": return `${v.file}:${v.line} uses ${v.object}.${v.member}, which only the edges (cli, action) may`;
    case "unknown-room": return `${v.file} sits in no room of ${v.layer}/ (docs/design.md §2, "Rooms")`;
    case "room": return `${v.file}:${v.line} (${v.layer}/${v.from}) has a ${v.kind} import of ${v.target} (${v.layer}/${v.to}): ${v.layer}/${v.from} may not import ${v.layer}/${v.to}`;
    case "room-cycle": return `room cycle in ${v.layer}/: ${[...v.rooms, v.rooms[0]].join(" → ")}`;
    case "stale-known-import": return `${v.file} → ${v.target} is no wrong-way import of the tree (any more): remove it from the known wrong-way imports`;
  }
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.[cm]?ts$/.test(entry.name) ? [path] : [];
  }).sort();
}

/** Node's own types, wherever this checker runs from (a fixture tree has no node_modules). */
const nodeTypesRoot = dirname(dirname(createRequire(import.meta.url).resolve("@types/node/package.json")));

const OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022, lib: ["lib.es2023.d.ts"], module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext, types: ["node"], typeRoots: [nodeTypesRoot],
  strict: true, skipLibCheck: true, noEmit: true, resolveJsonModule: true,
};

/** Node's types and the standard library, parsed once for every program made here. */
const declarationCache = new Map<string, ts.SourceFile>();
const isSharedDeclaration = (fileName: string, libDir: string): boolean =>
  fileName.endsWith(".d.ts") && (fileName.startsWith(nodeTypesRoot) || fileName.startsWith(libDir));

/**
 * A program of the source files and Node's types only: packages are left unresolved, since
 * the checks need our files and the `process`/`console` declarations, and the SDKs' types
 * would triple the time.
 */
function sourceProgram(rootNames: string[]): ts.Program {
  const host = ts.createCompilerHost(OPTIONS);
  const readSource = host.getSourceFile.bind(host);
  const libDir = host.getDefaultLibLocation?.() ?? dirname(host.getDefaultLibFileName(OPTIONS));
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    if (!isSharedDeclaration(fileName, libDir)) return readSource(fileName, languageVersion, onError, shouldCreate);
    let cached = declarationCache.get(fileName);
    if (!cached) {
      cached = readSource(fileName, languageVersion, onError, shouldCreate);
      if (cached) declarationCache.set(fileName, cached);
    }
    return cached;
  };
  host.resolveModuleNameLiterals = (literals, containingFile, redirected, options, containingSource) =>
    literals.map((literal) => isRelative(literal.text)
      ? ts.resolveModuleName(literal.text, containingFile, options, host, undefined, redirected,
        ts.getModeForUsageLocation(containingSource, literal, options))
      : { resolvedModule: undefined });
  const program = ts.createProgram({ rootNames, options: OPTIONS, host });
  const sample = program.getSourceFiles().find((f) => /[\\/]@types[\\/]node[\\/]process\.d\.ts$/.test(f.fileName));
  if (!sample) throw new Error(`architecture check: Node's types (@types/node under ${nodeTypesRoot}) did not load`);
  return program;
}

/** Each strongly connected set of files (Tarjan), as one cycle through all of them, smallest file first. */
export function importCycles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (file: string): void => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        connect(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)?.has(file)) cycles.push(cyclePath(graph, new Set(component)));
  };
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) connect(file);
  return cycles;
}

/** A shortest way from the component's smallest file back to itself, within the component. */
function cyclePath(graph: ReadonlyMap<string, ReadonlySet<string>>, component: ReadonlySet<string>): string[] {
  const start = [...component].sort()[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const file = queue[i]!;
    for (const target of [...(graph.get(file) ?? [])].sort()) {
      if (!component.has(target)) continue;
      if (target === start) {
        const path = [file];
        while (path[0] !== start) path.unshift(cameFrom.get(path[0]!)!);
        return path;
      }
      if (!cameFrom.has(target) && target !== start) {
        cameFrom.set(target, file);
        queue.push(target);
      }
    }
  }
  return [start];
}

function byPlace(a: Violation, b: Violation): number {
  const place = (v: Violation): [string, number] =>
    v.rule === "cycle" ? [v.files[0]!, 0] : v.rule === "room-cycle" ? [`${v.layer}/${v.rooms[0]}`, 0] : [v.file, "line" in v ? v.line : 0];
  const [fa, la] = place(a);
  const [fb, lb] = place(b);
  return fa < fb ? -1 : fa > fb ? 1 : la - lb || a.rule.localeCompare(b.rule);
}

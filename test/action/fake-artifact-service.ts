/**
 * A local server on 127.0.0.1 standing in for GitHub's artifact service as `@actions/artifact`
 * (v2+) speaks to it (ACTIONS_RESULTS_URL points at it): Twirp JSON `CreateArtifact` answers a
 * signed upload URL on this same server, the zip arrives there as Azure block-blob calls
 * (`PUT ?comp=block&blockid=…` for each block, then `PUT ?comp=blocklist` naming them, as
 * BlockBlobClient.uploadStream sends even one small block), and `FinalizeArtifact` answers the
 * artifact's id. A name created before in the same run is refused as the service refuses it
 * (409, `already_exists`: artifact names are unique in a workflow run). Every request is recorded;
 * `failWith` answers every Twirp call with that status
 * (a Twirp JSON error body; with `body`, that text instead, as a proxy's HTML error page is).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

const TWIRP = "/twirp/github.actions.results.api.v1.ArtifactService/";
export const RUN_BACKEND_ID = "run-backend-1";
export const JOB_BACKEND_ID = "job-backend-1";
export const ARTIFACT_ID = 4711;

export interface SeenRequest {
  method: string;
  /** Path and query. */
  url: string;
  authorization: string;
  /** The JSON body of a Twirp call; null for the blob calls. */
  json: Record<string, unknown> | null;
}

/** An unsigned JWT whose `scp` claim names the backend ids, as the runner's ACTIONS_RUNTIME_TOKEN does (the SDK decodes it, never checks it). */
export function runtimeToken(): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  return `${part({ alg: "none", typ: "JWT" })}.${part({ scp: `Actions.GenericRead:x Actions.Results:${RUN_BACKEND_ID}:${JOB_BACKEND_ID}` })}.`;
}

export async function startArtifactService(opts: { failWith?: number; body?: string } = {}) {
  const seen: SeenRequest[] = [];
  const blocks = new Map<string, Buffer>();
  const names = new Set<string>();
  /** The committed blob: the blocks the block list named, in its order. */
  let zip: Buffer | null = null;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (d: Buffer) => chunks.push(d));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const url = new URL(req.url ?? "/", "http://fake");
      const isTwirp = url.pathname.startsWith(TWIRP);
      seen.push({ method: req.method ?? "", url: `${url.pathname}${url.search}`, authorization: req.headers.authorization ?? "", json: isTwirp ? (JSON.parse(body.toString("utf8")) as Record<string, unknown>) : null });
      if (isTwirp && opts.failWith !== undefined && opts.body !== undefined) return void res.writeHead(opts.failWith, { "content-type": "text/html" }).end(opts.body);
      const send = (status: number, json?: unknown) => {
        res.writeHead(status, json === undefined ? {} : { "content-type": "application/json" }).end(json === undefined ? undefined : JSON.stringify(json));
      };
      if (isTwirp && opts.failWith !== undefined) return send(opts.failWith, { code: "internal", msg: "fake artifact service: failing on purpose" });
      if (req.method === "POST" && url.pathname === `${TWIRP}CreateArtifact`) {
        const name = String((JSON.parse(body.toString("utf8")) as { name?: unknown }).name);
        if (names.has(name)) return send(409, { code: "already_exists", msg: "an artifact with this name already exists on the workflow run" });
        names.add(name);
        return send(200, { ok: true, signed_upload_url: `${address()}/blob/artifact.zip?sig=fakesignature` });
      }
      if (req.method === "POST" && url.pathname === `${TWIRP}FinalizeArtifact`) return send(200, { ok: true, artifact_id: String(ARTIFACT_ID) });
      if (req.method === "PUT" && url.pathname === "/blob/artifact.zip" && url.searchParams.get("comp") === "block") {
        blocks.set(url.searchParams.get("blockid") ?? "", body);
        return send(201);
      }
      if (req.method === "PUT" && url.pathname === "/blob/artifact.zip" && url.searchParams.get("comp") === "blocklist") {
        const ids = [...body.toString("utf8").matchAll(/<(?:Latest|Uncommitted|Committed)>([^<]*)<\//g)].map((m) => m[1]!);
        zip = Buffer.concat(ids.map((id) => blocks.get(id) ?? Buffer.alloc(0)));
        return send(201);
      }
      if (req.method === "PUT" && url.pathname === "/blob/artifact.zip") {
        zip = body;
        return send(201);
      }
      send(404, { msg: `fake artifact service: no route ${req.method} ${url.pathname}` });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: address(),
    seen,
    /** The uploaded zip's bytes, once the block list is committed. */
    zip: () => zip,
    /** What the step needs to reach this service, as the runner gives a JavaScript action. */
    env: () => ({ ACTIONS_RESULTS_URL: `${address()}/`, ACTIONS_RUNTIME_TOKEN: runtimeToken() }),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

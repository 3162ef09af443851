/** A local server on 127.0.0.1 speaking the REST endpoints of the pull-request comment (GITHUB_API_URL points at it), for octo/repo#7. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Comment { id: number; body: string }

/** Issue comments of octo/repo#7, in memory; `forbidden` answers every request with 403. */
export async function startGitHub(opts: { forbidden?: boolean } = {}) {
  const comments: Comment[] = [{ id: 1, body: "an unrelated comment" }];
  const seen: string[] = [];
  let nextId = 100;
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d: Buffer) => (raw += d.toString()));
    req.on("end", () => {
      const path = (req.url ?? "").split("?")[0]!;
      seen.push(`${req.method} ${path} ${req.headers.authorization ?? ""}`);
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      };
      if (opts.forbidden) return send(403, { message: "Resource not accessible by integration" });
      if (req.method === "GET" && path === "/repos/octo/repo/issues/7/comments") return send(200, comments);
      if (req.method === "POST" && path === "/repos/octo/repo/issues/7/comments") {
        const c = { id: nextId++, body: JSON.parse(raw).body as string };
        comments.push(c);
        return send(201, c);
      }
      const m = /^\/repos\/octo\/repo\/issues\/comments\/(\d+)$/.exec(path);
      const c = m && comments.find((x) => x.id === Number(m[1]));
      if (req.method === "PATCH" && c) {
        c.body = JSON.parse(raw).body as string;
        return send(200, c);
      }
      send(404, { message: `fake GitHub: no route ${req.method} ${path}` });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, comments, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

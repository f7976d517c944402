// The frames' own origin (docs/frames.md §5.1): a small HTTP server for the export and import
// pages, config.js made from its options, every response with the frames' headers
// (Content-Security-Policy with frame-ancestors). `sigil serve` runs it on SIGIL_FRAMES_PORT;
// tests and tools call startFramesServer directly.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { checkSettings, configScript, frameAssets, framesHeaders, type Asset } from "./build.ts";

export interface FramesServerOptions {
  host?: string;
  /** 0: any free port. */
  port: number;
  /** The API the pages read BUNDLE_SIGNER keys from, as browsers reach it (scheme://host[:port]). */
  apiBaseUrl: string;
  /** Exact origins allowed to embed and drive the frames. */
  parentOrigins: string[];
}

export interface RunningFramesServer {
  /** http://host:port */
  url: string;
  /** The kit's exportIframeUrl. */
  exportUrl: string;
  /** The kit's importIframeUrl. */
  importUrl: string;
  close(): Promise<void>;
}

export async function startFramesServer(opts: FramesServerOptions): Promise<RunningFramesServer> {
  const settings = checkSettings({ apiBaseUrl: opts.apiBaseUrl, parentOrigins: opts.parentOrigins });
  const files = new Map<string, Asset>(await frameAssets());
  files.set("/config.js", { type: "text/javascript; charset=utf-8", body: Buffer.from(configScript(settings)) });
  const headers = framesHeaders(settings);
  const server = http.createServer((req, res) => {
    const pathname = (req.url ?? "/").split("?")[0]!;
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { ...headers, allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" }).end("method not allowed\n");
      return;
    }
    const asset = files.get(pathname === "/export" ? "/export.html" : pathname === "/import" ? "/import.html" : pathname);
    if (!asset) {
      res.writeHead(404, { ...headers, "content-type": "text/plain; charset=utf-8" }).end("not found\n");
      return;
    }
    res.writeHead(200, { ...headers, "content-type": asset.type, "content-length": String(asset.body.length) });
    res.end(req.method === "HEAD" ? undefined : asset.body);
  });
  // Requests are small and answered at once: idle connections do not linger.
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  const host = opts.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  const url = `http://${shownHost}:${port}`;
  return {
    url,
    exportUrl: `${url}/export.html`,
    importUrl: `${url}/import.html`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

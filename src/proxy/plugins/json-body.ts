// The auth proxy reads every body as JSON, whatever its content type says; an empty body is {}
// (wallet_kit_config is sometimes sent without one). Parsed as the public API parses
// (pipeline/body.ts: nesting bounded, an object): the proxy re-serializes what it forwards.
import { parseJsonBody } from "../../pipeline/body.ts";
import { globalPlugin } from "../../server/plugins/global.ts";

export const jsonBodyPlugin = globalPlugin("auth-proxy-json-body", async (app) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_req, body, done) => {
    const raw = body as Buffer;
    if (raw.toString("utf8").trim() === "") return done(null, {});
    try {
      done(null, parseJsonBody(raw));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
});

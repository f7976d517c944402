// Bodies are kept as raw bytes, whatever their content type: stamps sign the exact bytes, so
// JSON is parsed by the pipeline, after the bytes are safely in hand (docs/request-path.md §2.1).
import { globalPlugin } from "./global.ts";

export const rawBodyPlugin = globalPlugin("sigil-raw-body", async (app) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_req, body, done) => done(null, body));
});

// Bodies are kept as raw bytes, whatever their content type: stamps sign the exact bytes, so
// JSON is parsed by the pipeline, after the bytes are safely in hand (docs/request-path.md §2.1).
// A large body is read into one buffer of its declared length as its chunks arrive, and what
// the pipeline would otherwise work out over all of it in one turn — its shape against the
// limits, its text, whether it holds an unstorable escape — is gathered chunk by chunk
// (src/pipeline/body-stream.ts, docs/network.md §6.1). The limits and refusals are fastify's
// own reader's: 413 past the body limit (declared or received), 400 for a length that does
// not match the declared one or a stream error.
import { errorCodes, type FastifyRequest } from "fastify";
import { LARGE_BODY_BYTES, noteReceived } from "../../pipeline/body.ts";
import { BodyFacts } from "../../pipeline/body-stream.ts";
import { globalPlugin } from "./global.ts";

export const rawBodyPlugin = globalPlugin("sigil-raw-body", async (app) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (req, payload, done) => receive(req, payload as Payload, done as Done));
});

type Payload = NodeJS.ReadableStream & { receivedEncodedLength?: number };
type Done = (err: Error | null, body?: Buffer) => void;

function receive(req: FastifyRequest, payload: Payload, done: Done): void {
  const limit = req.routeOptions.bodyLimit;
  const declared = Number(req.headers["content-length"]);
  if (declared > limit) return done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
  // Small bodies (nearly all) as fastify reads them: every step over them is well under a
  // millisecond. A large one, or one of undeclared length, is followed chunk by chunk.
  const facts = declared < LARGE_BODY_BYTES ? undefined : new BodyFacts();
  /**
   * The body's buffer, of the declared length, once half of it has arrived (the chunks so far
   * copied in, the rest as they come): no copy of the whole at the end, and a client that
   * declares a megabyte and sends a byte holds a byte, not a megabyte.
   */
  let into: Buffer | undefined;
  const chunks: Buffer[] = [];
  let received = 0;

  const stop = () => {
    payload.removeListener("data", onData);
    payload.removeListener("end", onEnd);
    payload.removeListener("error", onEnd);
  };
  function onData(data: Buffer | string): void {
    const chunk = typeof data === "string" ? Buffer.from(data) : data;
    received += chunk.length;
    if (received > limit || (payload.receivedEncodedLength ?? 0) > limit) {
      stop();
      facts?.stop();
      return done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    }
    // Past the declared length the body is refused at its end, so nothing more is kept.
    if (received > declared) return;
    facts?.push(chunk);
    if (into) chunk.copy(into, received - chunk.length);
    else {
      chunks.push(chunk);
      if (facts && received * 2 >= declared) {
        into = Buffer.allocUnsafe(declared);
        let at = 0;
        for (const c of chunks) at += c.copy(into, at);
        chunks.length = 0;
      }
    }
  }
  function onEnd(err?: Error & { statusCode?: number }): void {
    stop();
    if (err) {
      facts?.stop();
      if (!(typeof err.statusCode === "number" && err.statusCode >= 400)) err.statusCode = 400;
      return done(err);
    }
    if (!Number.isNaN(declared) && (payload.receivedEncodedLength || received) !== declared) {
      facts?.stop();
      return done(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
    }
    const body = into ?? Buffer.concat(chunks, received);
    if (!facts) return done(null, body);
    facts.end(body).then(
      (known) => {
        noteReceived(body, known);
        done(null, body);
      },
      (err: Error) => done(err),
    );
  }
  payload.on("data", onData);
  payload.on("end", onEnd);
  payload.on("error", onEnd);
  payload.resume();
}

// Shared by bench/loop-gaps.mjs and bench/worst-gaps.mjs (docs/benchmarks.md §8.2): notes start at
// the first request whose URL holds `from` (the kind's operation), so start-up and set-up stay out.
import http from "node:http";

/** A function telling whether that request has arrived yet; always true without `from`. */
export function armedFrom(from) {
  let armed = !from;
  if (!armed) {
    const emit = http.Server.prototype.emit;
    http.Server.prototype.emit = function (event, req, ...rest) {
      if (!armed && event === "request" && typeof req?.url === "string" && req.url.includes(from)) armed = true;
      return emit.call(this, event, req, ...rest);
    };
  }
  return () => armed;
}

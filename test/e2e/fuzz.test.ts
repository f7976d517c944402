// Fuzzing the public routes of a real server, per engine. Two parts:
//   - a fixed corpus: every submit and query route (and a few unknown ones) with each kind
//     of hostile body — nested far too deep, U+0000, prototype names as keys and values,
//     wrong types, huge numbers — stamped by a real key (so validation after
//     authentication is reached), by an unknown key, and not at all;
//   - fast-check: random mutations of plausible bodies and raw texts, within a time budget.
// Every answer must be below 500 and, when not 200, the SDK's error body {code, message,
// details} with a TurnkeyErrorDetail first and the HTTP status grpc-gateway uses for the code.
//
// FUZZ_SEED=<n> replays a run (the seed is printed); FUZZ_RUNS=<n> changes its size.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import { goodStamp, newKeyPair, type KeyPair } from "../helpers/raw-http.ts";
import { ACTIVITIES, VOTES } from "../../src/activities/registry.ts";
import { QUERIES } from "../../src/queries/registry.ts";

const PROTOTYPE_NAMES = [
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "isPrototypeOf",
  "toLocaleString",
  "prototype",
];
const SUBMIT = [...new Set([...ACTIVITIES, ...VOTES].map((d) => d.op))].map((op) => `/public/v1/submit/${op}`);
const QUERY = QUERIES.map((q) => `/public/v1/query/${q.op}`);
const UNKNOWN = PROTOTYPE_NAMES.flatMap((n) => [`/public/v1/submit/${n}`, `/public/v1/query/${n}`]);
const TYPES = [...ACTIVITIES, ...VOTES].map((d) => d.type);
const TYPE_OF_PATH = new Map([...ACTIVITIES, ...VOTES].map((d) => [`/public/v1/submit/${d.op}`, d.type]));
/** Field names the request schemas use: mutations land where validation looks. */
const FIELD_NAMES = [
  "userTagName",
  "userIds",
  "users",
  "userName",
  "userEmail",
  "userPhoneNumber",
  "apiKeys",
  "apiKeyName",
  "publicKey",
  "curveType",
  "expirationSeconds",
  "userId",
  "apiKeyIds",
  "userTags",
  "authenticators",
  "oauthProviders",
  "policyName",
  "effect",
  "condition",
  "consensus",
  "notes",
  "policies",
  "policyId",
  "policyIds",
  "threshold",
  "subOrganizationName",
  "rootUsers",
  "rootQuorumThreshold",
  "fingerprint",
  "filterType",
  "filterValue",
  "filterByStatus",
  "filterByType",
  "paginationOptions",
  "limit",
  "before",
  "after",
  "activityId",
  "endpointId",
  "url",
  "name",
  "isActive",
  "subscriptions",
  "wallet",
];
const STATUS_OF_CODE = new Map([
  [3, [400, 413]],
  [5, [404]],
  [6, [409]],
  [7, [403]],
  [8, [429]],
  [9, [400]],
  [12, [501]],
  [16, [401]],
]);
const DEEP = 10_000;

interface Answer {
  status: number;
  text: string;
}

/** The SDK's error shape, or a 200 with a JSON object. */
function assertWellFormed(what: string, a: Answer): void {
  const ctx = `${what} → HTTP ${a.status}: ${a.text.slice(0, 300)}`;
  assert.ok(a.status < 500, ctx);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- whatever JSON came back, probed below
  let body: any;
  try {
    body = JSON.parse(a.text);
  } catch {
    assert.fail(`not JSON: ${ctx}`);
  }
  assert.ok(body && typeof body === "object" && !Array.isArray(body), ctx);
  if (a.status === 200) return;
  assert.deepEqual(Object.keys(body).sort(), ["code", "details", "message"], ctx);
  assert.equal(typeof body.code, "number", ctx);
  assert.ok(STATUS_OF_CODE.get(body.code)?.includes(a.status), `status does not match code ${body.code}: ${ctx}`);
  assert.equal(typeof body.message, "string", ctx);
  assert.ok(body.message.length > 0, ctx);
  assert.ok(Array.isArray(body.details) && body.details.length >= 1, ctx);
  assert.equal(body.details[0]["@type"], "type.googleapis.com/errors.v1.TurnkeyErrorDetail", ctx);
  assert.equal(typeof body.details[0].turnkeyErrorCode, "string", ctx);
}

type Signer = "root" | "stranger" | "none" | "garbage";

for (const engine of engines()) {
  describe(`fuzz: hostile requests never cause a 5xx (${engine.name})`, { skip: engine.skip, timeout: 240_000 }, () => {
    let inst: Instance;
    let server: RunningServer;
    let root: InitResult;
    let rootKey: KeyPair;
    const stranger = newKeyPair();
    let sent = 0;
    const statuses = new Map<number, number>();

    async function send(path: string, body: string | Buffer, signer: Signer): Promise<Answer> {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (signer === "root" || signer === "stranger") {
        headers["x-stamp"] = await goodStamp(signer === "root" ? rootKey : stranger, body.toString());
      } else if (signer === "garbage") {
        headers["x-stamp"] = Buffer.from(JSON.stringify({ publicKey: "__proto__", scheme: "constructor", signature: "00" })).toString(
          "base64url",
        );
      }
      const res = await fetch(server.url + path, { method: "POST", headers, body: typeof body === "string" ? body : new Uint8Array(body) });
      const answer = { status: res.status, text: await res.text() };
      sent++;
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      return answer;
    }

    /** A body the route would plausibly accept: its type, the root organization, now. */
    function plausible(path: string): Record<string, unknown> {
      if (path.startsWith("/public/v1/query/")) return { organizationId: root.organizationId };
      return {
        type: TYPE_OF_PATH.get(path) ?? "ACTIVITY_TYPE_CREATE_USER_TAG",
        timestampMs: String(Date.now()),
        organizationId: root.organizationId,
        parameters: { userTagName: `fuzz-${sent}`, userIds: [] },
      };
    }

    before(async () => {
      inst = await newInstance(engine.name);
      root = await sigilInit(inst, ["--name", "Fuzz Org"]);
      rootKey = { publicKey: root.apiPublicKey, privateKey: root.apiPrivateKey };
      server = await startServer(inst);
    });

    after(async () => {
      await server?.stop();
      await inst?.cleanup();
      const summary = [...statuses]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}×${n}`)
        .join(" ");
      console.log(`fuzz (${engine.name}): ${sent} requests; statuses ${summary}`);
    });

    it("a fixed corpus of hostile bodies on every route", async () => {
      const deep = (inner: string) => "[".repeat(DEEP) + inner + "]".repeat(DEEP);
      const bodies: [string, (path: string) => string | Buffer][] = [
        ["nested 10,000 deep", (p) => JSON.stringify({ ...plausible(p), parameters: "@" }).replace('"@"', deep("{}"))],
        ["nested 10,000 deep (whole body)", () => deep("0")],
        ["nested 10,000 deep objects", () => '{"a":'.repeat(DEEP) + "1" + "}".repeat(DEEP)],
        [
          "U+0000 in a value",
          (p) =>
            JSON.stringify({
              ...plausible(p),
              parameters: { userTagName: "a\u0000", name: "\u0000", fingerprint: "\u0000" },
              filterValue: "\u0000",
              filterType: "NAME",
            }),
        ],
        ["U+0000 in a key", (p) => JSON.stringify({ ...plausible(p), "\u0000": 1, parameters: { "\u0000": "x" } })],
        ["U+0000 in the type", (p) => JSON.stringify({ ...plausible(p), type: "ACTIVITY_TYPE_\u0000" })],
        [
          "prototype names as keys",
          (p) =>
            JSON.stringify(plausible(p))
              .replace(/^\{/, `{${PROTOTYPE_NAMES.map((n) => `"${n}":{"${n}":"${n}"}`).join(",")},`)
              .replace('"parameters":{', `"parameters":{${PROTOTYPE_NAMES.map((n) => `"${n}":{"x":1}`).join(",")},`),
        ],
        [
          "prototype names as values",
          (p) =>
            JSON.stringify({
              ...plausible(p),
              type: "constructor",
              filterType: "__proto__",
              filterValue: "valueOf",
              activityId: "toString",
              parameters: Object.fromEntries(FIELD_NAMES.map((f, i) => [f, PROTOTYPE_NAMES[i % PROTOTYPE_NAMES.length]])),
            }),
        ],
        ["prototype names as the type", (p) => JSON.stringify({ ...plausible(p), type: "__proto__" })],

        [
          "wrong types everywhere",
          (p) =>
            JSON.stringify({ type: [], timestampMs: 1, organizationId: {}, parameters: "x", paginationOptions: 7, filterByStatus: {}, p }),
        ],
        [
          "wrong types in parameters",
          (p) =>
            JSON.stringify({
              ...plausible(p),
              parameters: Object.fromEntries(FIELD_NAMES.map((f, i) => [f, [[], {}, 1, true, null, "x"][i % 6]])),
            }),
        ],
        [
          "huge numbers",
          (p) =>
            JSON.stringify({
              ...plausible(p),
              timestampMs: "@1",
              parameters: { threshold: "@2", rootQuorumThreshold: "@1" },
              paginationOptions: { limit: "@2" },
            })
              .replace(/"@1"/g, "1e999")
              .replace(/"@2"/g, "123456789012345678901234567890123456789"),
        ],
        [
          "huge numeric strings",
          (p) =>
            JSON.stringify({
              ...plausible(p),
              timestampMs: "9".repeat(400),
              paginationOptions: { limit: "9".repeat(400) },
              parameters: { threshold: 2 ** 53 + 1, rootQuorumThreshold: -1 },
            }),
        ],
        [
          "a 200 KB string",
          (p) => JSON.stringify({ ...plausible(p), parameters: { userTagName: "x".repeat(200_000) }, filterValue: "y".repeat(200_000) }),
        ],
        ["lone surrogates", (p) => JSON.stringify({ ...plausible(p), parameters: { userTagName: "\ud800" } }).replace("\ud800", "\\ud800")],
        ["not UTF-8", () => Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])],
        ["malformed JSON", () => '{"organizationId":'],
        ["JSON that is not an object", () => '"__proto__"'],
        ["empty", () => ""],
        ["ghost organization", (p) => JSON.stringify({ ...plausible(p), organizationId: "00000000-0000-4000-8000-000000000000" })],
      ];
      // Every request is independent of the others: they go eight at a time (each answer
      // still checked on its own), which keeps both cores busy instead of one request's round trip.
      const cases: { what: string; path: string; body: string | Buffer; signer: Signer }[] = [];
      const suborgs = "/public/v1/query/list_suborgs";
      for (const n of PROTOTYPE_NAMES) {
        cases.push({
          what: `${suborgs} filterType ${n}`,
          path: suborgs,
          body: JSON.stringify({ organizationId: root.organizationId, filterType: n, filterValue: "x" }),
          signer: "root",
        });
      }
      for (const path of [...SUBMIT, ...QUERY, ...UNKNOWN]) {
        for (const [i, [what, make]] of bodies.entries()) {
          // Every body is stamped by the root key (validation after authentication is
          // reached); half of them also go unstamped and half by an unknown key (refused
          // before or right after parsing), a few with a garbage stamp. Unknown routes are
          // refused before anything is read: one signer shows it.
          const signers: Signer[] = UNKNOWN.includes(path) ? ["root"] : ["root", i % 2 ? "none" : "stranger"];
          if (i % 5 === 0 && !UNKNOWN.includes(path)) signers.push("garbage");
          for (const signer of signers) {
            // Stamping a non-UTF-8 body as text would sign different bytes: send it unsigned.
            const body = make(path);
            if (Buffer.isBuffer(body) && signer !== "none") continue;
            cases.push({ what: `${path} ${what} (${signer})`, path, body, signer });
          }
        }
      }
      let next = 0;
      const worker = async () => {
        for (let c = cases[next++]; c; c = cases[next++]) assertWellFormed(c.what, await send(c.path, c.body, c.signer));
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      // Nothing was refused for its rate: every case reached the checks it was written for.
      assert.equal(statuses.get(429), undefined, `rate-limited answers: ${statuses.get(429)}`);
    });

    it("random mutations of plausible bodies (fast-check, time-bounded)", async () => {
      const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;
      const numRuns = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : 1000;
      console.log(`fuzz (${engine.name}): fast-check seed ${seed} (FUZZ_SEED=${seed} replays), up to ${numRuns} runs`);

      const nul = fc.string({ maxLength: 8 }).map((s) => `${s}\u0000${s}`);
      const key = fc.oneof(
        fc.constantFrom(...FIELD_NAMES, ...PROTOTYPE_NAMES, "organizationId", "type", "timestampMs", "parameters"),
        nul,
        fc.string({ maxLength: 10 }),
      );
      const leaf = fc.oneof(
        fc.constantFrom(...PROTOTYPE_NAMES, ...TYPES, "", "NAME", "EMAIL", "0", "-1", "1e309", root.organizationId),
        nul,
        fc.string({ maxLength: 40 }),
        fc.string({ unit: "grapheme", maxLength: 20 }),
        fc.integer(),
        fc.double(),
        fc.boolean(),
        fc.constant(null),
        fc.uuid(),
        fc.constantFrom(2 ** 53 + 1, -(2 ** 63), Number.MAX_VALUE),
      );
      const { value } = fc.letrec((tie) => ({
        value: fc.oneof(
          { depthSize: "small", withCrossShrink: true },
          leaf,
          fc.array(tie("value"), { maxLength: 4 }),
          fc.dictionary(key, tie("value"), { maxKeys: 4 }),
        ),
      }));
      /** Sets `v` at a path of keys inside `obj`, creating objects on the way. */
      const setAt = (obj: Record<string, unknown>, path: string[], v: unknown) => {
        let at: Record<string, unknown> = obj;
        for (const k of path.slice(0, -1)) {
          const next = Object.hasOwn(at, k) ? at[k] : undefined;
          const child = next && typeof next === "object" && !Array.isArray(next) ? (next as Record<string, unknown>) : {};
          Object.defineProperty(at, k, { value: child, enumerable: true, writable: true, configurable: true });
          at = child;
        }
        Object.defineProperty(at, path.at(-1)!, { value: v, enumerable: true, writable: true, configurable: true });
      };
      const mutation = fc.record({
        path: fc.array(key, { minLength: 1, maxLength: 3 }),
        underParameters: fc.boolean(),
        value,
        wrapDepth: fc.oneof(fc.constant(0), fc.integer({ min: 60, max: 70 }), fc.integer({ min: 100, max: 3000 })),
      });
      const textual = fc.oneof(
        fc.constantFrom("1e999", "-0", "[]", "{}", "null", '{"organizationId":null}', "\ufeff{}", '{"a":1,"a":2}', "{".repeat(70)),
        fc.string({ maxLength: 60 }),
        fc.json({ maxDepth: 4 }),
      );
      const request = fc.record({
        path: fc.oneof(
          { weight: 5, arbitrary: fc.constantFrom(...SUBMIT) },
          { weight: 3, arbitrary: fc.constantFrom(...QUERY) },
          { weight: 1, arbitrary: fc.constantFrom(...UNKNOWN) },
        ),
        signer: fc.oneof(
          { weight: 6, arbitrary: fc.constant<Signer>("root") },
          { weight: 1, arbitrary: fc.constantFrom<Signer>("stranger", "none", "garbage") },
        ),
        body: fc.oneof({ weight: 6, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }) }, { weight: 1, arbitrary: textual }),
      });

      const started = Date.now();
      await fc.assert(
        fc.asyncProperty(request, async ({ path, signer, body }) => {
          let text: string | undefined;
          if (typeof body === "string") {
            text = body;
          } else {
            const obj = plausible(path);
            for (const m of body) {
              const p = m.underParameters && path.includes("/submit/") ? ["parameters", ...m.path] : m.path;
              // Object.defineProperty, not assignment: "__proto__" becomes a key, as JSON allows.
              setAt(obj, p, m.value);
              if (m.wrapDepth > 0) {
                const json = JSON.stringify(obj);
                text = json.replace(/^\{/, `{"wrapped":${"[".repeat(m.wrapDepth)}0${"]".repeat(m.wrapDepth)},`);
              }
            }
            text ??= JSON.stringify(obj);
          }
          assertWellFormed(`${path} ${text.slice(0, 200)} (${signer})`, await send(path, text, signer));
        }),
        { seed, numRuns, interruptAfterTimeLimit: 45_000, markInterruptAsFailure: false },
      );
      console.log(`fuzz (${engine.name}): random phase took ${Date.now() - started} ms`);
    });

    it("the server is alive and logged no internal error", async () => {
      assert.equal(server.proc.exitCode, null);
      assert.doesNotMatch(
        server.output(),
        /"internal error"/,
        server
          .output()
          .split("\n")
          .filter((l) => l.includes('"internal error"'))
          .slice(0, 3)
          .join("\n"),
      );
      const body = JSON.stringify({ organizationId: root.organizationId });
      const who = await send("/public/v1/query/whoami", body, "root");
      assert.equal(who.status, 200, who.text);
    });
  });
}

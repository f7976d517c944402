// End-to-end: a body at the size limit costs the server little, whatever its shape
// (docs/network.md §6.2). One tenant's create_user_tag of exactly SIGIL_BODY_LIMIT_BYTES, with
// one member `pad` the schema drops, shaped as what parsing costs most — an object of
// ~100,000 members, or arrays nested 64 deep filling the megabyte — is refused 400 naming the
// body before it is parsed, while /healthz keeps answering; the heaviest body the limits
// accept is stored, /healthz answering too. Likewise a Solana transaction of 64 KiB of empty
// instructions or account references (docs/signing-policies.md §1.3).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import { stampedPost, type KeyPair, type RawResponse } from "../helpers/raw-http.ts";
import { healthLatencies } from "../helpers/health-poll.ts";
import { MAX_JSON_MEMBERS, MAX_JSON_VALUES } from "../../src/schemas/json-shape.ts";
import { solanaInstructions } from "../helpers/solana-tx.ts";

const TAG = "/public/v1/submit/create_user_tag";
const BODY_LIMIT = 1_048_576;
const BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest";
// Before: 0.5–2 s of parsing, walking and copying the dropped member held the event loop per
// request on the loaded 2-core test machine. 400 ms leaves room for that machine's scheduling,
// not for a block of the old size.
const HEALTH_BOUND_MS = 400;

/** `n` copies of `item` joined by commas in `[…]`, as many as fit in `room` bytes when `n` is unset. */
const repeated = (item: string, room: number) =>
  `[${Array(Math.floor((room - 1) / (item.length + 1)))
    .fill(item)
    .join(",")}]`;

for (const engine of engines()) {
  describe(`a body at the size limit does not hold the event loop (${engine.name})`, { skip: engine.skip, timeout: 180_000 }, () => {
    let inst: Instance;
    let server: RunningServer;
    let root: InitResult;
    let rootKey: KeyPair;
    let seq = 0;

    /** create_user_tag with `pad` last, spaces filling the body to exactly the size limit. */
    const padded = (pad: (room: number) => string): { name: string; body: string } => {
      const name = `cost-${engine.name}-${++seq}`;
      const head = `${JSON.stringify({ type: "ACTIVITY_TYPE_CREATE_USER_TAG", timestampMs: String(Date.now()), organizationId: root.organizationId, parameters: { userTagName: name, userIds: [] } }).slice(0, -1)},"pad":`;
      const room = BODY_LIMIT - head.length - 1;
      const value = pad(room);
      assert.ok(value.length <= room);
      return { name, body: `${head}${value}${" ".repeat(room - value.length)}}` };
    };
    const tagNames = async () => {
      const res = await stampedPost(
        server.url,
        "/public/v1/query/list_user_tags",
        JSON.stringify({ organizationId: root.organizationId }),
        rootKey,
      );
      assert.equal(res.status, 200, res.text);
      return (res.json.userTags as { tagName: string }[]).map((t) => t.tagName);
    };
    /** Sends each body in turn while /healthz is polled; the answers and the slowest /healthz. */
    const whilePolled = async (bodies: string[], path = TAG) => {
      const { result, latencies } = await healthLatencies(
        server.url,
        (async () => {
          const out: RawResponse[] = [];
          for (const body of bodies) out.push(await stampedPost(server.url, path, body, rootKey));
          return out;
        })(),
      );
      assert.ok(latencies.length > 0);
      return { answers: result, slowest: Math.max(...latencies), polls: latencies.length };
    };

    before(async () => {
      inst = await newInstance(engine.name);
      root = await sigilInit(inst, ["--name", "Body Cost Org"]);
      rootKey = { publicKey: root.apiPublicKey, privateKey: root.apiPrivateKey };
      server = await startServer(inst);
    });

    after(async () => {
      await server?.stop();
      await inst?.cleanup();
    });

    it("an object of many members and chains 64 deep filling the body are refused 400 naming the body, /healthz answering", async () => {
      let k = 0;
      const shapes = [
        padded((room) => {
          const parts: string[] = [];
          for (let used = 2; ;) {
            const m = `"k${k++}":0`;
            if (used + m.length + 1 > room) break;
            parts.push(m);
            used += m.length + 1;
          }
          return `{${parts.join(",")}}`;
        }),
        // The body is level 1, `pad` level 2: 62 more arrays reach the depth limit.
        padded((room) => repeated("[".repeat(61) + "]".repeat(61), room)),
      ];
      const before = await tagNames();
      const { answers, slowest, polls } = await whilePolled([...shapes, ...shapes].map((s) => s.body));
      for (const [i, res] of answers.entries()) {
        assert.equal(res.status, 400, `shape ${i % 2}: ${res.text.slice(0, 300)}`);
        assert.equal(res.json.code, 3);
        assert.match(res.json.message, i % 2 ? /more than 25,000 values/ : /more than 5,000 object members/);
        const violations = (res.json.details as { "@type": string; fieldViolations?: { field: string }[] }[]).find(
          (d) => d["@type"] === BAD_REQUEST,
        )?.fieldViolations;
        assert.deepEqual(
          violations?.map((v) => v.field),
          ["body"],
        );
      }
      assert.ok(slowest < HEALTH_BOUND_MS, `slowest /healthz answer ${slowest.toFixed(0)} ms of ${polls}`);
      assert.deepEqual(await tagNames(), before, "nothing stored");
    });

    it("the heaviest body the limits accept is stored, /healthz answering", async () => {
      // Every member a key never seen before, each in an object of its own (the costliest to
      // parse: docs/network.md §6.2), then zeros up to the value limit, then spaces.
      const members = MAX_JSON_MEMBERS - 10;
      const heaviest = () =>
        padded(() => {
          const objects = Array.from({ length: members }, (_, i) => `{"m${seq}x${i}":0}`);
          const zeros = Array(MAX_JSON_VALUES - 2 * members - 100).fill("0");
          return `[${[...objects, ...zeros].join(",")}]`;
        });
      // The server's first activity loads and compiles the activity path: not the body's cost.
      const warm = await stampedPost(server.url, TAG, padded(() => "0").body, rootKey);
      assert.equal(warm.status, 200, warm.text.slice(0, 300));
      const shapes = [heaviest(), heaviest(), heaviest()];
      const { answers, slowest, polls } = await whilePolled(shapes.map((s) => s.body));
      for (const res of answers) {
        assert.equal(res.status, 200, res.text.slice(0, 300));
        assert.equal(res.json.activity.status, "ACTIVITY_STATUS_COMPLETED");
      }
      assert.ok(slowest < HEALTH_BOUND_MS, `slowest /healthz answer ${slowest.toFixed(0)} ms of ${polls}`);
      const names = await tagNames();
      for (const s of shapes) assert.ok(names.includes(s.name));
    });

    it("a Solana transaction of 64 KiB of empty instructions or account references is refused 400 naming it, /healthz answering", async () => {
      const submit = (type: string, parameters: Record<string, unknown>) =>
        JSON.stringify({ type, timestampMs: String(Date.now()), organizationId: root.organizationId, parameters });
      const account = {
        curve: "CURVE_ED25519",
        pathFormat: "PATH_FORMAT_BIP32",
        path: "m/44'/501'/0'/0'",
        addressFormat: "ADDRESS_FORMAT_SOLANA",
      };
      const wallet = await stampedPost(
        server.url,
        "/public/v1/submit/create_wallet",
        submit("ACTIVITY_TYPE_CREATE_WALLET", { walletName: `sol-${engine.name}`, accounts: [account] }),
        rootKey,
      );
      assert.equal(wallet.status, 200, wallet.text.slice(0, 300));
      const sol = wallet.json.activity.result.createWalletResult.addresses[0] as string;
      // 3 bytes an empty instruction, 1 byte a reference: as many as fit in 64 KiB.
      const txs = [solanaInstructions(sol, 21_780), solanaInstructions(sol, 1, 65_000)];
      for (const hex of txs) assert.ok(hex.length / 2 <= 65_536 && hex.length / 2 > 65_000);
      const bodies = [...txs, ...txs].map((unsignedTransaction) =>
        submit("ACTIVITY_TYPE_SIGN_TRANSACTION_V2", { signWith: sol, unsignedTransaction, type: "TRANSACTION_TYPE_SOLANA" }),
      );
      const { answers, slowest, polls } = await whilePolled(bodies, "/public/v1/submit/sign_transaction");
      for (const [i, res] of answers.entries()) {
        assert.equal(res.status, 400, `transaction ${i % 2}: ${res.text.slice(0, 300)}`);
        assert.match(res.json.message, i % 2 ? /more than 2048 accounts in all/ : /21780 instructions; at most 512/, res.json.message);
        const violations = (res.json.details as { "@type": string; fieldViolations?: { field: string }[] }[]).find(
          (d) => d["@type"] === BAD_REQUEST,
        )?.fieldViolations;
        assert.deepEqual(
          violations?.map((v) => v.field),
          ["parameters.unsignedTransaction"],
        );
      }
      assert.ok(slowest < HEALTH_BOUND_MS, `slowest /healthz answer ${slowest.toFixed(0)} ms of ${polls}`);
    });
  });
}

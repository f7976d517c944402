// The largest EIP-712 requests against the real server (child process) and the official
// client, on both engines (docs/signing.md §2.4): a 64 KiB document of empty strings (21,794
// elements) is refused at once with a 400 naming the payload while /healthz keeps answering,
// and the largest legal request — sign_raw_payloads of two documents at the per-document
// bound, the request's bound in all — signs while /healthz keeps answering, each signature
// recovering to the account over viem's hashTypedData.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { Turnkey, TurnkeyRequestError, DEFAULT_ETHEREUM_ACCOUNTS } from "@turnkey/sdk-server";
import { hashTypedData, recoverAddress, type Hex, type TypedDataDefinition } from "viem";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import { healthLatencies } from "../helpers/health-poll.ts";
import { MAX_EIP712_ELEMENTS, MAX_EIP712_ELEMENTS_PER_REQUEST } from "../../src/signing/eip712.ts";

const BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest";

/**
 * Typed data whose message is one string[] of `n` distinct short strings: `n` + 4 elements
 * (the domain's name and its 32-byte piece, the array, each string and its piece), each
 * string a keccak of its own — the costliest element per character.
 */
function strings(n: number, tag: string): TypedDataDefinition {
  return {
    types: { EIP712Domain: [{ name: "name", type: "string" }], M: [{ name: "v", type: "string[]" }] } as const,
    primaryType: "M",
    domain: { name: tag },
    message: { v: Array.from({ length: n }, (_, i) => (i % 2 ? "" : String(i))) },
  };
}
/** Elements of strings(n): the domain's name (2), the array (1), each string (1, and 1 per non-empty 32-byte piece). */
const elementsOf = (n: number) => 2 + 1 + n + Math.ceil(n / 2);

async function failure(p: Promise<unknown>): Promise<TurnkeyRequestError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof TurnkeyRequestError) return err;
    throw err;
  }
  throw new Error("expected the request to be refused");
}
const fieldsOf = (err: TurnkeyRequestError) =>
  (err.details ?? []).flatMap((d) => (d["@type"] === BAD_REQUEST ? (d.fieldViolations as { field: string }[]) : []).map((v) => v.field));

for (const engine of engines()) {
  describe(`the largest EIP-712 requests (${engine.name})`, { skip: engine.skip, timeout: 240_000 }, () => {
    let inst: Instance;
    let server: RunningServer;
    let init: InitResult;
    let address: Hex;
    const client = () =>
      new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: init.apiPublicKey,
        apiPrivateKey: init.apiPrivateKey,
        defaultOrganizationId: init.organizationId,
      }).apiClient();

    before(async () => {
      inst = await newInstance(engine.name);
      init = await sigilInit(inst, ["--name", "EIP-712 Cost Org"]);
      server = await startServer(inst);
      const w = await client().createWallet({ walletName: "eth", accounts: DEFAULT_ETHEREUM_ACCOUNTS });
      address = w.addresses[0] as Hex;
    });
    after(async () => {
      await server?.stop();
      await inst?.cleanup();
    });

    it("a 64 KiB document of empty strings is a 400 naming the payload, and /healthz answers within 500 ms", async () => {
      const inner =
        '{"types":{"EIP712Domain":[{"name":"name","type":"string"}],"M":[{"name":"v","type":"string[]"}]},"primaryType":"M","domain":{"name":"big"},"message":{"v":[]}}';
      const room = 65_536 - inner.length;
      const payload = inner.replace(
        '"v":[]',
        `"v":[${Array(Math.floor((room + 1) / 3))
          .fill('""')
          .join(",")}]`,
      );
      assert.ok(payload.length <= 65_536 && payload.length > 65_000);
      const before = (await client().getActivities({})).activities.length;
      const { result: err, latencies } = await healthLatencies(
        server.url,
        failure(
          client().signRawPayload({ signWith: address, payload, encoding: "PAYLOAD_ENCODING_EIP712", hashFunction: "HASH_FUNCTION_NO_OP" }),
        ),
      );
      // Before: accepted, its digest computed three times on the event loop — 1.7–4 s on the
      // loaded 2-core test machine, /healthz waiting it out. 500 ms leaves room for that
      // machine's scheduling, not for a block of the old size.
      assert.ok(latencies.length > 0);
      assert.ok(Math.max(...latencies) < 500, `slowest /healthz answer ${Math.max(...latencies).toFixed(0)} ms of ${latencies.length}`);
      assert.equal(err.code, 3, err.message);
      assert.match(err.message, new RegExp(`parameters\\.payload: has more than ${MAX_EIP712_ELEMENTS} elements`));
      assert.deepEqual(fieldsOf(err), ["parameters.payload"]);
      assert.equal((await client().getActivities({})).activities.length, before, "the refusal records nothing");
    });

    it("the largest legal request (two documents at the per-document bound) signs while /healthz answers within 500 ms", async () => {
      let n = MAX_EIP712_ELEMENTS - 4;
      while (elementsOf(n + 1) <= MAX_EIP712_ELEMENTS) n++;
      while (elementsOf(n) > MAX_EIP712_ELEMENTS) n--;
      const docs = [strings(n, "first"), strings(n, "second")];
      assert.equal(2 * MAX_EIP712_ELEMENTS, MAX_EIP712_ELEMENTS_PER_REQUEST, "two documents at the bound are the request's bound");
      const { result, latencies } = await healthLatencies(
        server.url,
        client().signRawPayloads({
          signWith: address,
          payloads: docs.map((d) => JSON.stringify(d)),
          encoding: "PAYLOAD_ENCODING_EIP712",
          hashFunction: "HASH_FUNCTION_NO_OP",
        }),
      );
      assert.ok(latencies.length > 0);
      assert.ok(Math.max(...latencies) < 500, `slowest /healthz answer ${Math.max(...latencies).toFixed(0)} ms of ${latencies.length}`);
      const signatures = result.signatures ?? [];
      assert.equal(signatures.length, 2);
      for (const [i, s] of signatures.entries()) {
        const signature = { r: `0x${s.r}` as Hex, s: `0x${s.s}` as Hex, yParity: Number(s.v) };
        assert.equal(await recoverAddress({ hash: hashTypedData(docs[i]!), signature }), address, `document ${i}`);
      }

      // One element more in all is refused, naming the list.
      const over = [strings(n, "first"), strings(n + 1, "second")];
      const err = await failure(
        client().signRawPayloads({
          signWith: address,
          payloads: over.map((d) => JSON.stringify(d)),
          encoding: "PAYLOAD_ENCODING_EIP712",
          hashFunction: "HASH_FUNCTION_NO_OP",
        }),
      );
      assert.equal(err.code, 3, err.message);
      assert.deepEqual(fieldsOf(err), ["parameters.payloads[1]"]);
    });
  });
}

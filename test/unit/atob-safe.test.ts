// Token payloads core reads with the browser's atob (docs/logins.md §2.3): the encoding has no
// '-' or '_' and decodes to the same claims, however long — a session issued with a profile
// carries its scope, thousands of characters of policy text.
import { it } from "node:test";
import assert from "node:assert/strict";
import { atobSafe } from "../../src/auth/tokens.ts";

const decode = (b64url: string) => JSON.parse(Buffer.from(b64url, "base64url").toString("utf8")) as unknown;

it("claims of every size encode without '-' or '_' and decode to themselves (a 64 KiB scope included)", () => {
  const scope = (n: number) => Array.from({ length: n }, (_, i) => `activity.type == 'ACTIVITY_TYPE_${i}' ~ é ☃ \\" ?`).join(" || ");
  for (const n of [0, 1, 10, 100, 1_000, 2_000]) {
    const claims = {
      exp: 1_700_000_000 + n,
      public_key: "02" + "ab".repeat(32),
      session_type: "p",
      user_id: "u",
      organization_id: "o",
      scope: scope(n),
    };
    const text = atobSafe(claims);
    assert.doesNotMatch(text, /[-_]/);
    assert.deepEqual(decode(text), claims);
  }
});

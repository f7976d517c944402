// Helpers of the MFA tests (docs/mfa.md): a second API key or a passkey for a user, an MFA
// policy, and approvals stamped by either.
import assert from "node:assert/strict";
import { completed, type Creds, type Harness, type Json, type Res } from "./inproc.ts";
import { SoftPasskey, submitWithPasskey } from "./webauthn.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";

export const MFA_STATUS = "ACTIVITY_STATUS_AUTHENTICATORS_NEEDED";

/** Another API key of `as`'s user: the same user, another credential. */
export async function secondKey(h: Harness, as: Creds): Promise<Creds & { apiKeyId: string }> {
  const key = generateP256KeyPair();
  const res = await h.submit(
    "create_api_keys",
    "ACTIVITY_TYPE_CREATE_API_KEYS_V2",
    {
      userId: as.userId,
      apiKeys: [{ apiKeyName: `k-${Date.now()}-${Math.random()}`, publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
    },
    { as },
  );
  const [apiKeyId] = completed(res, "createApiKeysResult").apiKeyIds as string[];
  return { ...as, key, apiKeyId: apiKeyId! };
}

/** A passkey registered for `as`'s user (the harness must accept TEST_WEBAUTHN). */
export async function passkeyOf(h: Harness, as: Creds): Promise<{ passkey: SoftPasskey; authenticatorId: string }> {
  const passkey = new SoftPasskey();
  const res = await h.submit(
    "create_authenticators",
    "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2",
    { userId: as.userId, authenticators: [passkey.registration()] },
    { as },
  );
  const [authenticatorId] = completed(res, "createAuthenticatorsResult").authenticatorIds as string[];
  return { passkey, authenticatorId: authenticatorId! };
}

export const step = (...methods: Json[]): Json => ({ any: methods });

/** Creates an MFA policy for `as`'s user (by `as`); its id. */
export async function addMfaPolicy(h: Harness, as: Creds, over: Json): Promise<string> {
  const params = {
    userId: as.userId,
    mfaPolicyName: `mfa-${Date.now()}-${Math.random()}`,
    condition: "true",
    requiredAuthenticationMethods: [],
    order: 0,
    ...over,
  };
  return completed(await h.submit("create_mfa_policy", "ACTIVITY_TYPE_CREATE_MFA_POLICY", params, { as }), "createMfaPolicyResult")
    .mfaPolicyId as string;
}

/** The submission answered 200 and waits for authenticators; its activity. */
export function waiting(res: Res): Json {
  assert.equal(res.status, 200, JSON.stringify(res.json));
  assert.equal(res.json.activity.status, MFA_STATUS, JSON.stringify(res.json.activity));
  return res.json.activity as Json;
}

export const approveWithKey = (h: Harness, as: Creds, fingerprint: string, organizationId = as.organizationId): Promise<Res> =>
  h.submit("approve_activity", "ACTIVITY_TYPE_APPROVE_ACTIVITY", { fingerprint }, { as, organizationId });

export const approveWithPasskey = (h: Harness, passkey: SoftPasskey, fingerprint: string, organizationId: string): Promise<Res> =>
  submitWithPasskey(h, passkey, "approve_activity", "ACTIVITY_TYPE_APPROVE_ACTIVITY", { fingerprint }, organizationId);

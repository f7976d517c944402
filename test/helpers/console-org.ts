// The organization the console's browser test works in (test/e2e/console.test.ts), made through
// the official SDK clients only, on a real server whose WebAuthn settings accept passkeys made at
// the console's origin (http://localhost:<port>, docs/configuration.md: SIGIL_WEBAUTHN_RP_ID and
// SIGIL_WEBAUTHN_ORIGINS).
//
// Who is in it (root quorum {Alice, Bob}, threshold 1):
// - Alice: the root user `sigil init` makes, with its API key (the test's SDK credential) and,
//   later, a passkey registered by create_authenticators (console-passkey.ts makes it in the page);
// - Bob: the second root user, an API key;
// - Carol: not root, an API key; one policy lets her create user tags with Bob's approval, so
//   her create_users is refused (the condition names another type) and her create_user_tag waits
//   for a vote; her create_policy is refused too (nothing names it);
// - a sub-organization with its own root user Dora (an API key).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { TurnkeyClient, TurnkeyRequestError } from "@turnkey/http";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { Turnkey, type TurnkeyApiClient } from "@turnkey/sdk-server";
import { generateP256KeyPair, type P256KeyPair } from "../../src/crypto/keygen.ts";
import {
  freePort,
  newInstance,
  sigilInit,
  startServer,
  type EngineSpec,
  type InitResult,
  type Instance,
  type RunningServer,
} from "./server.ts";

export const ORG_NAME = "Acme Treasury";
export const SUB_ORG_NAME = "Harbor Branch";
/** Names distinctive enough to search the DOM for (a sub-organization's user must see none of the parent's). */
export const NAMES = { alice: "Alice Ashdown", bob: "Bob Bramblewood", carol: "Carol Quillfeather", dora: "Dora Dunmoreland" } as const;
/** The condition of Carol's policy, and the part of it a create_users makes false. */
export const TAG_CONDITION = "activity.type == 'ACTIVITY_TYPE_CREATE_USER_TAG'";

/** One API key's clients: @turnkey/http (raw answers, no polling) and @turnkey/sdk-server. */
export interface Member {
  userId: string;
  organizationId: string;
  key: P256KeyPair;
  http: TurnkeyClient;
  sdk: TurnkeyApiClient;
}

export function member(baseUrl: string, key: P256KeyPair, userId: string, organizationId: string): Member {
  return {
    userId,
    organizationId,
    key,
    http: new TurnkeyClient({ baseUrl }, new ApiKeyStamper({ apiPublicKey: key.publicKey, apiPrivateKey: key.privateKey })),
    sdk: new Turnkey({
      apiBaseUrl: baseUrl,
      apiPublicKey: key.publicKey,
      apiPrivateKey: key.privateKey,
      defaultOrganizationId: organizationId,
    }).apiClient(),
  };
}

export interface ConsoleServer {
  inst: Instance;
  server: RunningServer;
  init: InitResult;
  /** http://localhost:<port>: where the browser opens the console; passkeys are made for this origin. */
  origin: string;
  stop(): Promise<void>;
}

/** `sigil init` (Alice as its root user) and `sigil serve` on a port chosen first, so the WebAuthn origin can name it. */
export async function startConsoleServer(engine: EngineSpec["name"]): Promise<ConsoleServer> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const inst = await newInstance(engine, { SIGIL_WEBAUTHN_RP_ID: "localhost", SIGIL_WEBAUTHN_ORIGINS: origin });
  try {
    const init = await sigilInit(inst, ["--name", ORG_NAME, "--user-name", NAMES.alice]);
    const server = await startServer(inst, [], { port });
    return {
      inst,
      server,
      init,
      origin,
      async stop() {
        await server.stop();
        await inst.cleanup();
      },
    };
  } catch (err) {
    await inst.cleanup();
    throw err;
  }
}

export interface ConsoleOrg {
  organizationId: string;
  alice: Member;
  bob: Member;
  carol: Member;
  /** The sub-organization's root user. */
  dora: Member;
  subOrganizationId: string;
  /** Carol's policy: ALLOW create_user_tag with Bob's approval. */
  tagPolicyId: string;
  /** Carol's create_users, refused (DENY_IMPLICIT: the tag policy's condition is false). */
  refusedUsersId: string;
  /** Carol's create_policy, refused as well (the dry-run's policy does not change it). */
  refusedPolicyId: string;
  /** Carol's create_user_tag, waiting for Bob (CONSENSUS_NEEDED). */
  pendingId: string;
  pendingTagName: string;
}

let lastTs = 0;
/** Strictly increasing timestamps: two bodies never collide into one activity by accident. */
function ts(): string {
  lastTs = Math.max(Date.now(), lastTs + 1);
  return String(lastTs);
}

/** The activity id a policy refusal names (PolicyEnginePermissionError detail), after checking it is one. */
async function refusedActivityId(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (err) {
    assert.ok(err instanceof TurnkeyRequestError, String(err));
    assert.equal(err.code, 7, err.message);
    const detail = (err.details ?? []).find((d) => String((d as { "@type"?: string })["@type"]).endsWith("PolicyEnginePermissionError")) as
      { activityId?: string } | undefined;
    assert.ok(detail?.activityId, `no activity named in ${JSON.stringify(err.details)}`);
    return detail.activityId;
  }
  assert.fail("the request was allowed");
}

export async function seedConsoleOrg(s: ConsoleServer): Promise<ConsoleOrg> {
  const url = s.server.url;
  const organizationId = s.init.organizationId;
  const alice = member(url, { publicKey: s.init.apiPublicKey, privateKey: s.init.apiPrivateKey }, s.init.userId, organizationId);

  const addUser = async (userName: string): Promise<Member> => {
    const key = generateP256KeyPair();
    const res = await alice.sdk.createUsers({
      users: [
        {
          userName,
          apiKeys: [{ apiKeyName: `${userName} laptop`, publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
          authenticators: [],
          oauthProviders: [],
          userTags: [],
        },
      ],
    });
    assert.equal(res.activity.status, "ACTIVITY_STATUS_COMPLETED");
    return member(url, key, res.userIds[0]!, organizationId);
  };
  const bob = await addUser(NAMES.bob);
  const carol = await addUser(NAMES.carol);
  const quorum = await alice.sdk.updateRootQuorum({ threshold: 1, userIds: [alice.userId, bob.userId] });
  assert.equal(quorum.activity.status, "ACTIVITY_STATUS_COMPLETED");

  const policy = await alice.sdk.createPolicy({
    policyName: "Tags need Bob",
    effect: "EFFECT_ALLOW",
    condition: TAG_CONDITION,
    consensus: `approvers.any(user, user.id == '${bob.userId}')`,
    notes: "user tags wait for Bob's approval",
  });
  assert.equal(policy.activity.status, "ACTIVITY_STATUS_COMPLETED");

  const refusedUsersId = await refusedActivityId(
    carol.http.createUsers({
      type: "ACTIVITY_TYPE_CREATE_USERS_V4",
      timestampMs: ts(),
      organizationId,
      parameters: { users: [{ userName: "Mallory Mistake", apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }] },
    }),
  );
  const refusedPolicyId = await refusedActivityId(
    carol.http.createPolicy({
      type: "ACTIVITY_TYPE_CREATE_POLICY_V3",
      timestampMs: ts(),
      organizationId,
      parameters: { policyName: "Carol allows herself", effect: "EFFECT_ALLOW", condition: "true", consensus: "true", notes: "" },
    }),
  );
  const pendingTagName = `treasury-ops-${randomBytes(3).toString("hex")}`;
  const pending = await carol.http.createUserTag({
    type: "ACTIVITY_TYPE_CREATE_USER_TAG",
    timestampMs: ts(),
    organizationId,
    parameters: { userTagName: pendingTagName, userIds: [] },
  });
  assert.equal(pending.activity.status, "ACTIVITY_STATUS_CONSENSUS_NEEDED");

  const doraKey = generateP256KeyPair();
  const sub = await alice.sdk.createSubOrganization({
    subOrganizationName: SUB_ORG_NAME,
    rootQuorumThreshold: 1,
    rootUsers: [
      {
        userName: NAMES.dora,
        apiKeys: [{ apiKeyName: "Dora laptop", publicKey: doraKey.publicKey, curveType: "API_KEY_CURVE_P256" }],
        authenticators: [],
        oauthProviders: [],
      },
    ],
  });
  assert.equal(sub.activity.status, "ACTIVITY_STATUS_COMPLETED");
  const dora = member(url, doraKey, sub.rootUserIds![0]!, sub.subOrganizationId);

  return {
    organizationId,
    alice,
    bob,
    carol,
    dora,
    subOrganizationId: sub.subOrganizationId,
    tagPolicyId: policy.policyId,
    refusedUsersId,
    refusedPolicyId,
    pendingId: pending.activity.id,
    pendingTagName,
  };
}

/** What create_authenticators takes for one passkey: the challenge as sent and the attestation as @turnkey/http encodes it. */
export interface PagePasskey {
  encodedChallenge: string;
  attestation: {
    credentialId: string;
    clientDataJson: string;
    attestationObject: string;
    transports: ["AUTHENTICATOR_TRANSPORT_INTERNAL"];
  };
}

/**
 * navigator.credentials.create in `page` (which must be at the console's origin and have a
 * virtual authenticator): a discoverable ES256 credential for rp id `localhost`, encoded base64url
 * as getWebAuthnAttestation encodes it (docs/logins.md §6.2).
 */
export async function createPasskeyInPage(page: import("playwright-core").Page, userName: string): Promise<PagePasskey> {
  // A string, not a function: tsx would wrap a function's inner helpers in its own __name, which the page lacks.
  return page.evaluate(`(async (name) => {
    const b64url = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
    const challenge = crypto.getRandomValues(new Uint8Array(32));
    const cred = await navigator.credentials.create({
      publicKey: {
        rp: { id: "localhost", name: "Sigil console" },
        challenge,
        pubKeyCredParams: [{ type: "public-key", alg: -7 }],
        user: { id: crypto.getRandomValues(new Uint8Array(32)), name, displayName: name },
        authenticatorSelection: { residentKey: "required", requireResidentKey: true, userVerification: "preferred" },
      },
    });
    return {
      encodedChallenge: b64url(challenge.buffer),
      attestation: {
        credentialId: b64url(cred.rawId),
        clientDataJson: b64url(cred.response.clientDataJSON),
        attestationObject: b64url(cred.response.attestationObject),
        transports: ["AUTHENTICATOR_TRANSPORT_INTERNAL"],
      },
    };
  })(${JSON.stringify(userName)})`);
}

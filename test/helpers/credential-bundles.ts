// The client side of the legacy logins' credential bundles (docs/logins.md §9.2): a target
// key pair, the bundle opened with @turnkey/crypto's decryptCredentialBundle, and the key it
// holds as stamping credentials — what sdk-browser's iframe does with an email, OAuth or OTP
// auth bundle.
import { decryptCredentialBundle, getPublicKey } from "@turnkey/crypto";
import type { Mail } from "./smtp-sink.ts";
import { completed, type Creds, type Harness } from "./inproc.ts";
import { generateP256KeyPair, type P256KeyPair } from "../../src/crypto/keygen.ts";
import { newId } from "../../src/store/util.ts";

/** A client's target key pair (compressed public hex, private hex). */
export const targetKey = (): P256KeyPair => generateP256KeyPair();

/** The credential in `bundle`, opened with the target's private key by the SDK. */
export function openBundle(bundle: string, target: P256KeyPair): P256KeyPair {
  const privateKey = decryptCredentialBundle(bundle, target.privateKey);
  const publicKey = Buffer.from(getPublicKey(Buffer.from(privateKey, "hex"), true)).toString("hex");
  return { privateKey, publicKey };
}

/** The bundle in a credential mail: the base58 text on the first line of its text part. */
export function bundleFrom(mail: Mail): string {
  const m = /^([1-9A-HJ-NP-Za-km-z]{60,})\r?$/m.exec(mail.text);
  if (!m) throw new Error(`no credential bundle in mail text: ${JSON.stringify(mail.text.slice(0, 200))}`);
  return m[1]!;
}

/**
 * A sub-organization made by the (top-level) root, whose root user has `email` (vouched, i.e.
 * verified: docs/login-lookups.md §1) and an API key of its own.
 */
export async function subOrgWithEmail(h: Harness, email: string): Promise<Creds & { orgId: string }> {
  const key = generateP256KeyPair();
  const res = await h.submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
    subOrganizationName: `legacy-${newId().slice(0, 8)}`,
    rootQuorumThreshold: 1,
    rootUsers: [
      {
        userName: "end user",
        userEmail: email,
        apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
        authenticators: [],
        oauthProviders: [],
      },
    ],
  });
  const r = completed(res, "createSubOrganizationResultV8");
  return { orgId: r.subOrganizationId, organizationId: r.subOrganizationId, userId: r.rootUserIds[0], key };
}

import { Type, type Static } from "@sinclair/typebox";
import { invalid, precondition } from "../../errors.ts";
import { Name, maxItems } from "../../schemas/common.ts";
import { insertOrganization, organizationChain, setRootQuorum, MAX_ORGANIZATION_DEPTH } from "../../store/organizations.ts";
import { newId } from "../../store/util.ts";
import { defineActivity, type ExecuteContext, type PrepareContext } from "../define.ts";
import { prepareUsersProviders, type PreparedIdentity } from "../oauth/provider-identities.ts";
import { addUsers, keysOfUsers } from "../users/new-users.ts";
import { refuseAncestorKeys } from "../credentials/ancestor-keys.ts";
import { MAX_USERS_PER_REQUEST, RootUserParams } from "../users/user-schemas.ts";
import { bindToken, markVerified, VerificationTokenParam, vouchContacts } from "../users/contact-verification.ts";
import { checkVerifiedSignup, ClientSignatureParams } from "./verified-signup.ts";
import { writtenByBackend } from "./backend-word.ts";
import { markKeysTrusted } from "../../store/api-keys.ts";
import { createSignupWallet, signupPolicyWallets, SignupWalletParams, SignupWalletResult } from "../wallets/signup.ts";

const Params = Type.Object({
  subOrganizationName: Name("subOrganizationName"),
  rootUsers: maxItems(RootUserParams, "rootUsers", MAX_USERS_PER_REQUEST, 1),
  rootQuorumThreshold: Type.Integer({ minimum: 1, errorMessage: "must be a positive integer" }),
  /** A wallet created in the new sub-organization (src/activities/wallets/signup.ts). */
  wallet: Type.Optional(SignupWalletParams),
  disableEmailRecovery: Type.Optional(Type.Boolean()),
  disableEmailAuth: Type.Optional(Type.Boolean()),
  disableSmsAuth: Type.Optional(Type.Boolean()),
  disableOtpEmailAuth: Type.Optional(Type.Boolean()),
  /** Marks the contact it proves verified on the root user carrying it (verified-signup.ts). */
  verificationToken: Type.Optional(VerificationTokenParam),
  /** Required with verificationToken: the token key's signature over the sign-up. */
  clientSignature: Type.Optional(ClientSignatureParams),
});

const SETTINGS = ["disableEmailRecovery", "disableEmailAuth", "disableSmsAuth", "disableOtpEmailAuth"] as const;

/** V8 clients sign the sign-up as `signupV2`, V7 (proxy v1 signup) as `signup`. */
const execute = (usageKey: "signupV2" | "signup") => async (ctx: ExecuteContext<PreparedIdentity[][]>, p: Static<typeof Params>) => {
  if (p.rootQuorumThreshold > p.rootUsers.length) {
    throw invalid("rootQuorumThreshold must not exceed the number of root users", [
      { field: "parameters.rootQuorumThreshold", description: `must be between 1 and ${p.rootUsers.length}` },
    ]);
  }
  // "" is an absent token (proto3 JSON). Without a token nothing is verified, and a client
  // signature alone has nothing to sign for.
  // The helpers below need nothing of what was prepared (the OAuth identities).
  const plain: ExecuteContext = { ...ctx, prepared: undefined };
  const verified = p.verificationToken
    ? await checkVerifiedSignup(plain, { ...p, verificationToken: p.verificationToken }, usageKey)
    : undefined;
  if (!verified && p.clientSignature !== undefined) {
    throw invalid("parameters.clientSignature: only meaningful with a verificationToken; omit it", [
      { field: "parameters.clientSignature", description: "requires verificationToken" },
    ]);
  }
  const chain = await organizationChain(ctx.tx, ctx.organization.id, ctx.chains);
  const depth = chain.length;
  if (depth >= MAX_ORGANIZATION_DEPTH) {
    throw precondition(`organizations nest at most ${MAX_ORGANIZATION_DEPTH} levels deep`);
  }
  const settings: Record<string, boolean> = {};
  for (const s of SETTINGS) if (p[s] !== undefined) settings[s] = p[s];

  const subOrganizationId = newId();
  await insertOrganization(ctx.tx, {
    id: subOrganizationId,
    name: p.subOrganizationName,
    parent_id: ctx.organization.id,
    root_quorum_threshold: p.rootQuorumThreshold,
    policy_version: 0,
    settings: JSON.stringify(settings),
    created_at: ctx.now,
    updated_at: ctx.now,
  });
  // The new organization's ancestors are the target's chain: a sub-organization's user
  // creating one below itself may not give it a key of an organization above them.
  await refuseAncestorKeys(ctx.tx, chain, ctx.actor.organizationId, keysOfUsers(p.rootUsers, "parameters.rootUsers"));
  const rootUserIds = await addUsers(
    ctx.tx,
    subOrganizationId,
    p.rootUsers,
    ctx.now,
    "parameters.rootUsers",
    ctx.services.logins.webauthn,
    ctx.prepared,
  );
  await setRootQuorum(ctx.tx, subOrganizationId, rootUserIds);
  const byBackend = await writtenByBackend(plain, depth);
  // The backend's keys outrank any copy a tenant registers below the parent; what a browser
  // or a tenant registers has to be used (proved) first (docs/login-lookups.md §3).
  if (byBackend && p.rootUsers.some((u) => u.apiKeys.length > 0)) await markKeysTrusted(ctx.tx, subOrganizationId);
  if (verified) {
    // One transaction: a token already bound (or bound concurrently) undoes the whole sign-up.
    await bindToken(ctx.tx, verified.claims.id, ctx.now, "parameters.verificationToken");
    await markVerified(ctx.tx, rootUserIds[verified.holder]!, verified.kind, ctx.now);
  } else if (byBackend) {
    // The app's backend (a top-level organization's own credential: `depth` counts it alone;
    // never its auth proxy's key, which signs what a browser typed) wrote these contacts
    // itself: vouched for, so the user can then log in by OTP naming the parent
    // (docs/login-lookups.md §1). A sign-up carrying a token is the end user's own: only the
    // contact the token proves is verified.
    await vouchContacts(ctx.tx, rootUserIds, ctx.now);
  }
  if (p.wallet) return { subOrganizationId, rootUserIds, wallet: await createSignupWallet(plain, subOrganizationId, p.wallet) };
  return { subOrganizationId, rootUserIds };
};

const Result = Type.Object({
  subOrganizationId: Type.String(),
  rootUserIds: Type.Array(Type.String()),
  wallet: Type.Optional(SignupWalletResult),
});

const common = {
  resource: "ORGANIZATION",
  action: "CREATE",
  kind: "CREATE_SUB_ORGANIZATION",
  params: Params,
  returns: Result,
  // `wallet` in the parent's policies: the wallet the sign-up creates (its name as label).
  policyWallets: signupPolicyWallets,
  // Every OAuth root user's token verified outside the transaction (a trusted issuer's JWKS).
  prepare: (ctx: PrepareContext, p: Static<typeof Params>) => prepareUsersProviders(ctx, p.rootUsers, "parameters.rootUsers"),
};

export const createSubOrganizationV8 = defineActivity({
  ...common,
  type: "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8",
  result: "createSubOrganizationResultV8",
  execute: execute("signupV2"),
  summary: "Create a sub-organization with its root users and root quorum (the version current SDKs send).",
});

export const createSubOrganizationV7 = defineActivity({
  ...common,
  type: "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7",
  result: "createSubOrganizationResultV7",
  execute: execute("signup"),
  summary: "Create a sub-organization (the version deployed older clients send).",
});

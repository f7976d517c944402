// create_oauth_providers V2 (docs/oauth.md §6.1): attach OIDC identities to a user of the
// organization. An `oidcToken` entry is verified in full (no nonce: registering logs nobody
// in) and registers (iss, its audience, sub); an `oidcClaims` entry registers another
// audience of the same person and must be backed by an oidcToken of the same request with the
// same iss and sub. One (iss, aud, sub) identity is unique across the service: a second
// attach — even by a request racing this one — is OAUTH_PROVIDER_ALREADY_EXISTS (409).
//
// A parent organization cannot add providers to a sub-organization's user (no parentMayStamp:
// the pipeline refuses parent writes before any policy). Upstream allows it for Google tokens
// whose verified email is the user's; Sigil refuses it outright: sub-organizations belong to
// their users (docs/request-path.md §5).
//
// Who may vouch with claims (docs/oauth-identities.md §3): a
// claims entry is not proof that the person holds a token of that audience, only that they
// hold one of *some* audience of that issuer. An end user can get a token for their own app
// ("evil-app") from anyone who signs in there, with that person's subject; claims naming the
// victim's app would then plant the victim's identity on the attacker's user, and the
// victim's next oauth_login would land in the attacker's account. So claims are accepted only
// from a credential of a top-level organization (no parent: the app's backend vouching, as
// a proxy sign-up does); a sub-organization's user must present a token of each audience.
import { Type } from "@sinclair/typebox";
import { ApiError, Grpc, invalid, notFound } from "../../errors.ts";
import { organizationChain } from "../../store/organizations.ts";
import { Id, maxItems } from "../../schemas/common.ts";
import { findUser } from "../../store/users.ts";
import { attachIdentities, MAX_OAUTH_PROVIDERS_PER_USER } from "../../store/oauth-providers.ts";
import { defineActivity, type Actor } from "../define.ts";
import { OauthProviderParamsV2 } from "./oidc-params.ts";
import { markEmailVerifiedByGoogle, verifyForRegistration, type PreparedIdentity } from "./provider-identities.ts";

const FIELD = "parameters.oauthProviders";

const Params = Type.Object({
  userId: Id("user"),
  oauthProviders: maxItems(OauthProviderParamsV2, "oauthProviders", MAX_OAUTH_PROVIDERS_PER_USER, 1),
});

export const createOauthProvidersV2 = defineActivity({
  type: "ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS_V2",
  result: "createOauthProvidersResultV2",
  resource: "CREDENTIAL",
  action: "CREATE",
  kind: "CREATE_OAUTH_PROVIDERS",
  summary:
    "Attach OAuth (OIDC) identities to a user: each oidcToken verified, oidcClaims backed by a token of the same person in the request.",
  params: Params,
  returns: Type.Object({ providerIds: Type.Array(Type.String()) }),
  // docs/policy-language.md §6.8: a user adding their own sign-in method.
  implicitlyAllowed: (p, actor: Actor) => p.userId === actor.userId,
  check(p) {
    p.oauthProviders.forEach((e, i) => {
      const at = `${FIELD}[${i}]`;
      if ((e.oidcToken === undefined) === (e.oidcClaims === undefined)) {
        throw invalid(`${at}: exactly one of oidcToken and oidcClaims must be set`, [
          { field: at, description: "exactly one of oidcToken, oidcClaims" },
        ]);
      }
    });
  },
  async prepare(ctx, p) {
    const claimed = p.oauthProviders.findIndex((e) => e.oidcClaims !== undefined);
    // The acting credential's organization (never a parent's here: no parentMayStamp); a
    // chain of one is a top-level organization. Organizations are never re-parented.
    if (claimed >= 0 && (await organizationChain(ctx.db, ctx.actor.organizationId, ctx.chains)).length !== 1) {
      const at = `${FIELD}[${claimed}].oidcClaims`;
      throw new ApiError(
        Grpc.PERMISSION_DENIED,
        // As the pipeline's refusal of a parent's write (pipeline/parent-writes.ts): who signs may not ask this.
        "REQUEST_NOT_AUTHORIZED",
        `${at}: OIDC claims are accepted only from a top-level organization's credential; a sub-organization's user must present an oidcToken issued for each audience`,
        [
          {
            "@type": "type.googleapis.com/google.rpc.BadRequest",
            fieldViolations: [{ field: at, description: "claims only from a top-level organization; send an oidcToken of this audience" }],
          },
        ],
      );
    }
    const identities: PreparedIdentity[] = [];
    const tokens: PreparedIdentity[] = [];
    for (const [i, e] of p.oauthProviders.entries()) {
      if (e.oidcToken === undefined) continue;
      const idn = await verifyForRegistration(ctx, e.oidcToken, e.providerName, `${FIELD}[${i}].oidcToken`);
      tokens.push(idn);
    }
    let t = 0;
    for (const [i, e] of p.oauthProviders.entries()) {
      if (e.oidcToken !== undefined) {
        identities.push(tokens[t++]!);
        continue;
      }
      const c = e.oidcClaims!;
      const at = `${FIELD}[${i}].oidcClaims`;
      if (!tokens.some((tk) => tk.issuer === c.iss && tk.subject === c.sub)) {
        throw invalid(`${at}: claims must be backed by an oidcToken in the same request with the same iss and sub`, [
          { field: at, description: "needs an oidcToken of the same iss and sub in this request" },
        ]);
      }
      identities.push({
        providerName: e.providerName,
        issuer: c.iss,
        audience: c.aud,
        subject: c.sub,
        field: at,
        vouchedBy: "OIDC_CLAIMS",
      });
    }
    return identities;
  },
  async execute(ctx, p) {
    const user = await findUser(ctx.tx, ctx.organization.id, p.userId);
    if (!user) throw notFound(`parameters.userId: no user ${p.userId} in organization ${ctx.organization.id}`);
    const providerIds = await attachIdentities(ctx.tx, ctx.organization.id, user.id, ctx.prepared, ctx.now, FIELD);
    await markEmailVerifiedByGoogle(ctx.tx, user.id, user.email, ctx.prepared, ctx.now);
    return { providerIds };
  },
});

// STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN: the attestation is a verification token
// (docs/logins.md §3.5, §4.1) that verify_otp bound to the stamp's key. The token must be signed by a
// VERIFICATION_TOKEN service key, unexpired, recorded by this service, not yet used to log
// in, and bound to `publicKey`. The user is the one whose email (case-insensitively) or phone
// number is the token's contact: in the target organization or an ancestor (the nearest
// wins; any state of the contact: those organizations are the caller's own or more trusted),
// else in the unique sub-organization below the target that has a user with that contact
// *verified* — core sends loginWithOtp with the parent organization's id, and a contact a
// sub-organization wrote on its own must neither capture nor block that login
// (docs/login-lookups.md §1, §2). The token must have been issued by that user's organization
// or one of its ancestors (a parent's token serves its sub-organizations; a
// sub-organization's only itself).
import { HOLDER_COLUMNS, holderParts } from "../holder.ts";
import { unauthenticated } from "../../errors.ts";
import { organizationChain } from "../../store/organizations.ts";
import type { Db } from "../../store/schema.ts";
import { resolveHolder } from "../credential-scope.ts";
import { verifyingKeys } from "../service-keys.ts";
import { readVerificationToken, type VerificationClaims } from "../tokens.ts";
import type { Rider } from "../strategy.ts";
import type { AttestationScheme } from "./scheme.ts";

const refused = (why: string) => unauthenticated("UNAUTHENTICATED", `invalid attested stamp: ${why}`);

/** Every user whose contact is the token's, with its organization name and the rider's columns. */
function usersWithContact(db: Db, claims: VerificationClaims, rider: Rider<unknown>) {
  const q = db
    .selectFrom("users")
    .innerJoin("organizations", "organizations.id", "users.organization_id")
    .select(["users.organization_id as organization_id", ...HOLDER_COLUMNS])
    .select(rider.columns(db));
  return claims.verification_type === "OTP_TYPE_SMS"
    ? q.select("users.phone_verified_at as contact_verified_at").where("users.phone", "=", claims.contact).execute()
    : q
        .select("users.email_verified_at as contact_verified_at")
        .where("users.email_normalized", "=", claims.contact.toLowerCase())
        .execute();
}

export const verificationTokenScheme: AttestationScheme = {
  async resolve(db, chains, stamp, targetOrganizationId, now, rider) {
    const read = readVerificationToken(stamp.attestation, await verifyingKeys(db, "VERIFICATION_TOKEN"), now);
    if ("problem" in read) throw refused(read.problem);
    const claims = read.claims;
    if (claims.public_key.toLowerCase() !== stamp.publicKey.toLowerCase()) {
      throw refused("publicKey is not the key the verification token is bound to");
    }
    const record = await db
      .selectFrom("verification_tokens")
      .select(["organization_id", "contact", "verification_type", "login_used_at"])
      .where("id", "=", claims.id)
      .executeTakeFirst();
    if (
      !record ||
      record.organization_id !== claims.organization_id ||
      record.contact !== claims.contact ||
      record.verification_type !== claims.verification_type
    ) {
      throw refused("unknown verification token");
    }
    // Also checked (conditionally, once) when stamp_login consumes the token; refused here
    // first so that a spent token costs no activity.
    if (record.login_used_at !== null) throw refused("this verification token has already been used to log in");

    const what = claims.verification_type === "OTP_TYPE_SMS" ? "phone number" : "email";
    let holders: Awaited<ReturnType<typeof usersWithContact>> = [];
    const lookUp = async () => (holders = await usersWithContact(db, claims, rider));
    const verified = (u: (typeof holders)[number]) => u.contact_verified_at !== null && u.contact_verified_at !== undefined;
    const found = await resolveHolder(db, targetOrganizationId, "then-descendants", lookUp, chains, `this verified ${what}`, (below) =>
      below.filter(verified),
    );
    if (!found) {
      throw unauthenticated(
        "CREDENTIAL_NOT_FOUND",
        `no user with the verified ${what} in organization ${targetOrganizationId} or its sub-organizations`,
      );
    }
    const user = found.holder;
    // Phone numbers are not unique within an organization: two users holding it is as
    // ambiguous as two sub-organizations. Found below, only the users whose contact is
    // verified count (the same rule as between sub-organizations).
    const foundBelow = found.organizationId === user.organization_id && user.organization_id !== targetOrganizationId;
    const rivals = holders.filter((u) => u.organization_id === user.organization_id && (!foundBelow || verified(u)));
    if (rivals.length > 1) {
      throw unauthenticated(
        "CREDENTIAL_CONFLICT",
        `more than one user associated with this verified ${what} in organization ${user.organization_id}`,
      );
    }
    const chain = await organizationChain(db, user.organization_id, chains);
    if (!chain.includes(claims.organization_id)) {
      throw refused(
        `the verification token was issued by organization ${claims.organization_id}, which is not the user's organization or one of its parents`,
      );
    }
    const holder = holderParts(user);
    return {
      principal: {
        ...holder,
        actor: { ...holder.actor, attestedTokenId: claims.id },
        organization: { id: found.organizationId },
        fromAncestor: found.fromAncestor,
      },
      credentialId: claims.id,
      expiresAt: Number(claims.exp),
      rider: rider.read(user),
    };
  },
};

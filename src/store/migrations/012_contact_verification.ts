import { sql, type Kysely } from "kysely";

// Logins that search downward from an ancestor's id now find users only by verified contacts
// (docs/login-lookups.md §1, §5), and create_sub_organization in a top-level organization
// vouches for the contacts the app's backend writes. Rows written before this migration never
// had that mark, so the backend-made accounts would stop resolving by the parent's id. This
// gives it to the contacts the new rule would have vouched for — and only to those whose
// origin the store still shows:
//   - the user was created together with its organization (users.created_at equals
//     organizations.created_at: the root users of create_sub_organization, one transaction,
//     one timestamp);
//   - that organization's parent is a top-level organization (only the parent's own
//     credentials can create sub-organizations there: the app's backend);
//   - the user was never updated since (users.updated_at equals created_at: no
//     update_user_email / _phone_number / update_user / update_user_name, so the contact is
//     the one the backend wrote);
//   - no user of that organization had a contact verified at its creation (a sign-up carrying
//     a verification token or a Google identity: the end user's own sign-up, where the new
//     rule verifies only the proven contact).
// Everything else stays as it was: verified if a token, an OTP login or Google proved it,
// unverified otherwise — including any contact a sub-organization wrote for itself. An
// unverified contact still logs its user in when the login names the user's own
// organization, which then marks it verified.
//
// No schema change: the columns are migration 006's. One set-based UPDATE (no table rewrite,
// no lock beyond the rows it changes; the EXISTS looks organizations up by primary key). One
// statement for both contacts, so the test for a sign-up with proof sees the rows as they
// were before it; a second run changes nothing.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    UPDATE users SET
      email_verified_at = CASE WHEN email IS NOT NULL AND email_verified_at IS NULL THEN created_at ELSE email_verified_at END,
      phone_verified_at = CASE WHEN phone IS NOT NULL AND phone_verified_at IS NULL THEN created_at ELSE phone_verified_at END
    WHERE ((users.email IS NOT NULL AND users.email_verified_at IS NULL) OR (users.phone IS NOT NULL AND users.phone_verified_at IS NULL))
      AND users.updated_at = users.created_at
      AND EXISTS (
        SELECT 1 FROM organizations o JOIN organizations p ON p.id = o.parent_id
        WHERE o.id = users.organization_id AND p.parent_id IS NULL AND o.created_at = users.created_at
      )
      AND NOT EXISTS (
        SELECT 1 FROM users peer
        WHERE peer.organization_id = users.organization_id
          AND (peer.email_verified_at = peer.created_at OR peer.phone_verified_at = peer.created_at)
      )
  `.execute(db);
}

// Which marks the migration gave cannot be told apart from later ones: nothing to undo.
export async function down(): Promise<void> {}

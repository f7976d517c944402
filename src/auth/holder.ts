// What every strategy's credential look-up reads of the credential's user and organization
// (one statement with the credential), and the Principal parts built from it: the columns
// and the mapping are written once here.
import type { Actor } from "./principal.ts";
import type { UserRow } from "../store/users.ts";

/** Selections for a query joining `users` and `organizations` (the user's organization). */
export const HOLDER_COLUMNS = [
  "users.id as user_id",
  "users.name as user_name",
  "users.email as user_email",
  "users.email_normalized as user_email_normalized",
  "users.phone as user_phone",
  "users.created_at as user_created_at",
  "users.updated_at as user_updated_at",
  "organizations.name as organization_name",
] as const;

export interface HolderRow {
  /** The credential's (and so the user's) organization. */
  organization_id: string;
  user_id: string;
  user_name: string;
  user_email: string | null;
  user_email_normalized: string | null;
  user_phone: string | null;
  user_created_at: number;
  user_updated_at: number;
  organization_name: string;
}

/** The acting user as handlers see it, and its row (activity views reuse it). */
export function holderParts(row: HolderRow): { actor: Actor; user: UserRow } {
  return {
    actor: { userId: row.user_id, userName: row.user_name, organizationId: row.organization_id, organizationName: row.organization_name },
    user: {
      id: row.user_id,
      organization_id: row.organization_id,
      name: row.user_name,
      email: row.user_email,
      email_normalized: row.user_email_normalized,
      phone: row.user_phone,
      created_at: row.user_created_at,
      updated_at: row.user_updated_at,
    },
  };
}

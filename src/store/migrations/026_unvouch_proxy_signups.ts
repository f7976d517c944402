import { sql, type Kysely } from "kysely";

// Contacts an auth proxy's sign-up was wrongly vouched for (docs/login-lookups.md §5): before
// this version a token-less create_sub_organization submitted by a top-level organization's
// proxy user marked its root users' contacts verified, as if the app's backend had written
// them. Such contacts are the browser's word. This clears the mark where the store still shows
// it came from that vouching — the activity was submitted by a proxy user, carried no
// verificationToken, and the contact was verified at the user's creation (vouching stamps the
// creation time; a later OTP login or token stamps its own) — and leaves every other contact as
// it is. No schema change; the updates are conditional, so running it twice changes nothing.
const PAGE = 500;
const TYPES = ["ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8"];

interface Row {
  id: string;
  intent: string;
  result: string | null;
}

function subOrganizationOf(row: Row): string | undefined {
  try {
    const intent = JSON.parse(row.intent) as { verificationToken?: unknown };
    if (typeof intent.verificationToken === "string" && intent.verificationToken !== "") return undefined;
    const result = JSON.parse(row.result ?? "null") as { subOrganizationId?: unknown } | null;
    return typeof result?.subOrganizationId === "string" ? result.subOrganizationId : undefined;
  } catch {
    return undefined;
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  // Untyped: a migration sees the schema as it was when it was written.
  const d = db as unknown as Kysely<Record<string, Record<string, unknown>>>;
  let after = "";
  for (;;) {
    const rows = (await d
      .selectFrom("activities as a")
      .innerJoin("auth_proxy_configs as c", "c.user_id", "a.submitted_by")
      .select(["a.id as id", "a.intent as intent", "a.result as result"])
      .where("a.type", "in", TYPES)
      .where("a.status", "=", "ACTIVITY_STATUS_COMPLETED")
      .where("a.id", ">", after)
      .orderBy("a.id")
      .limit(PAGE)
      .execute()) as unknown as Row[];
    if (rows.length === 0) return;
    after = rows[rows.length - 1]!.id;
    const orgs = rows.map(subOrganizationOf).filter((o): o is string => o !== undefined);
    if (orgs.length === 0) continue;
    await d
      .updateTable("users")
      .set({ email_verified_at: null })
      .where("organization_id", "in", orgs)
      .where("email_verified_at", "=", sql.ref("created_at"))
      .execute();
    await d
      .updateTable("users")
      .set({ phone_verified_at: null })
      .where("organization_id", "in", orgs)
      .where("phone_verified_at", "=", sql.ref("created_at"))
      .execute();
  }
}

export async function down(): Promise<void> {
  // Nothing to undo: the marks cleared were never proof of anything.
}

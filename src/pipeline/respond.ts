// The last step of every submit route: the answer for an activity, the same for its first
// submission, every resubmission and every vote on it.
import { Grpc } from "../errors.ts";
import type { ActivityRow } from "../store/activities.ts";
import type { Db } from "../store/schema.ts";
import type { UserRow } from "../store/users.ts";
import { activityView, type ActivityView, type KnownVotes } from "../views/activity.ts";
import { deniedError, STATUS } from "./authorize.ts";
import type { GovernanceCache } from "../governance/cache.ts";

export interface Answer {
  activity: ActivityView;
}

export async function respond(
  db: Db,
  row: ActivityRow,
  known: KnownVotes | undefined,
  /** The caller, for canApprove / canReject. */
  viewer: UserRow,
  /** The store's (service state). */
  governance: GovernanceCache,
): Promise<Answer> {
  if (row.status === STATUS.FAILED && row.failure) {
    const f = JSON.parse(row.failure) as { code: number; message: string; details: Record<string, unknown>[] };
    const detail = f.details.find((d) => String(d["@type"]).endsWith("PolicyEnginePermissionError"));
    // A denied activity is answered as denied, however often it is resubmitted.
    if (f.code === Grpc.PERMISSION_DENIED && detail) {
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the recorded failure's message, a string as written
      throw deniedError(String(detail.message ?? f.message), row.id, (detail.policyEvaluations as unknown[]) ?? []);
    }
  }
  return { activity: await activityView(db, row, known, viewer, governance) };
}

// Secret parameters at the pipeline's recording and execution points (docs/activities.md §10):
// the intent and the votes' messages are recorded with each declared secret sealed with the
// master key and bound to the activity; an approval that executes the activity later opens
// them again. The fingerprint is the hash of the body as sent and is not affected.
import { precondition } from "../errors.ts";
import type { ActivityParams, CompiledActivity } from "../activities/define.ts";
import { mapMessageSecretsAsync, openSecrets, sealSecrets } from "../activities/secret-params.ts";
import type { MasterKey } from "../crypto/envelope.ts";
import { isKeyUnavailable } from "../crypto/key-unavailable.ts";
import type { VoteRow } from "../store/activities.ts";
import type { PipelineDeps } from "./deps.ts";

function keyFor(deps: PipelineDeps, def: CompiledActivity): MasterKey {
  if (!deps.masterKey) throw new Error(`${def.type} has secret parameters: the pipeline needs the master key to record it`);
  return deps.masterKey;
}

/** The intent column of a new activity: its parameters, secrets sealed. */
export async function recordedIntent(
  deps: PipelineDeps,
  def: CompiledActivity,
  params: ActivityParams,
  activityId: string,
): Promise<string> {
  const paths = def.secretParams ?? [];
  return JSON.stringify(paths.length ? await sealSecrets(params, paths, keyFor(deps, def), activityId) : params);
}

/**
 * A vote as recorded: when its message is a submission body of the activity's type, the
 * secrets in it are sealed as in the intent (the stamp then no longer verifies over the
 * recorded message: docs/activities.md §10.2).
 */
export async function recordedVote(deps: PipelineDeps, def: CompiledActivity, vote: VoteRow): Promise<VoteRow> {
  const paths = def.secretParams ?? [];
  if (!paths.length) return vote;
  const message = await mapMessageSecretsAsync(vote.message, def.type, paths, (p) =>
    sealSecrets(p, paths, keyFor(deps, def), vote.activity_id),
  );
  return message === vote.message ? vote : { ...vote, message };
}

/**
 * The parameters an approval executes (or prepares) the activity with: the recorded intent,
 * secrets opened. A value that does not open — sealed for another activity or field, or with
 * another master key — refuses the vote; the activity is left as it was.
 */
export async function executableParams(
  deps: PipelineDeps,
  def: CompiledActivity,
  recorded: ActivityParams,
  activityId: string,
): Promise<ActivityParams> {
  const paths = def.secretParams ?? [];
  if (!paths.length) return recorded;
  try {
    return await openSecrets(recorded, paths, keyFor(deps, def), activityId);
  } catch (err) {
    // A token that does not answer is an outage (503), not a value that does not open.
    if (isKeyUnavailable(err)) throw err;
    throw precondition(
      `activity ${activityId}: its secret parameters do not open (sealed for another activity or with another master key); it cannot be executed`,
    );
  }
}

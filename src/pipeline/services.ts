// What an activity's handler may use beyond its transaction: the service keys (opened with
// the master key, read through the activity's own transaction — on SQLite a read on the plain
// handle would wait for the commit group this activity belongs to) and the login settings.
import type { ActivityServices } from "../activities/define.ts";
import { activeServiceKey, verifyingKeys } from "../auth/service-keys.ts";
import { DEFAULT_LOGIN_SETTINGS } from "../logins/settings.ts";
import type { Executor } from "../store/schema.ts";
import type { PipelineDeps } from "./deps.ts";

export function activityServices(deps: PipelineDeps, tx: Executor, now: number): ActivityServices {
  const master = () => {
    if (!deps.masterKey) throw new Error("this activity needs the master key in the pipeline");
    return deps.masterKey;
  };
  return {
    serviceKey: (purpose) => activeServiceKey(deps.state.serviceKeys, tx, master(), purpose, now),
    verifyingKeys: (purpose) => verifyingKeys(tx, purpose),
    get masterKey() {
      return master();
    },
    logins: deps.logins ?? DEFAULT_LOGIN_SETTINGS,
    ...(deps.log ? { log: deps.log } : {}),
    ...(deps.tvcImageRoot ? { tvcImageRoot: deps.tvcImageRoot } : {}),
  };
}

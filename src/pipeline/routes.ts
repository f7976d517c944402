// The route kinds of the submit path, as data: for each kind, where its signing credential
// may be found by default, what it checks beyond the schema, and the steps that follow
// validation (docs/request-path.md §2.5). Every submit request runs context → authenticate →
// validate (submit.ts), then its kind's steps. The login types (stamp_login, otp_login,
// oauth_login, …) are no kind of their own: they are "activity" definitions that set
// parentMayStamp (a parent may stamp them, docs/request-path.md §5.2) and, for stamp_login,
// credentialScope "then-descendants" (the credential may sit below the target,
// docs/stamps.md §5.2), which overrides the kind's default here.
import type { RouteDefinitions, RouteKind, SubmitRoute } from "../activities/define.ts";
import type { CredentialScope } from "../auth/credential-scope.ts";
import type { Answer } from "./respond.ts";
import { submitNew } from "./submission.ts";
import type { Params, Validated } from "./validate.ts";
import { voteOn } from "./vote.ts";

export interface RouteSteps<D extends SubmitRoute> {
  credentialScope: CredentialScope;
  /** Checks beyond the schema, during validation (before liveness). */
  check(def: D, params: Params): void;
  /** What follows validation, ending in the answer. */
  run(v: Validated<D>): Promise<Answer>;
}

export const ROUTE_KINDS: { [K in RouteKind]: RouteSteps<RouteDefinitions[K]> } = {
  // fingerprint → authorize → settle → respond (submission.ts)
  activity: {
    credentialScope: "target-then-ancestors",
    // The definition's own checks (e.g. policy expressions): an invalid request is refused
    // instead of waiting for approvals.
    check: (def, params) => def.check?.(params),
    run: submitNew,
  },
  // lock target → voter standing → authorize → settle → respond (vote.ts)
  vote: {
    credentialScope: "target-then-ancestors",
    check: () => {},
    run: voteOn,
  },
};

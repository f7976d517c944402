// create_session_profile (docs/sessions-and-network.md §6.1): a named scope — a policy-language
// condition — and an optional session-length ceiling that logins of this organization's users
// and of every organization below it may name (sessionProfileId). Immutable: nothing updates
// or deletes a profile, so a session always runs under the scope it was issued with.
import { Type } from "@sinclair/typebox";
import { exhausted, invalid } from "../../errors.ts";
import { Name } from "../../schemas/common.ts";
import { newId } from "../../store/util.ts";
import { lockOrganization } from "../../store/locks.ts";
import { countSessionProfiles, insertSessionProfile, MAX_SESSION_PROFILES_PER_ORGANIZATION } from "../../store/session-profiles.ts";
import { sessionSeconds } from "./create-session.ts";
import { checkExpressions, Expression } from "../policies/policy-fields.ts";
import { defineActivity } from "../define.ts";

const Params = Type.Object({
  sessionProfileName: Name("sessionProfileName"),
  scope: Expression("scope"),
  // A whole number of seconds from 1 to the configured session maximum, checked in execute (the maximum is configuration).
  expirationSeconds: Type.Optional(
    Type.String({ maxLength: 32, errorMessage: "expirationSeconds must be a whole number of seconds, as a string" }),
  ),
  notes: Type.Optional(Type.String({ maxLength: 4096, errorMessage: "notes must be at most 4096 characters" })),
});

export const createSessionProfile = defineActivity({
  type: "ACTIVITY_TYPE_CREATE_SESSION_PROFILE",
  resource: "SESSION_PROFILE",
  action: "CREATE",
  kind: "CREATE_SESSION_PROFILE",
  summary:
    "Create an immutable session profile: a scope (policy-language condition every request of a session issued with it must satisfy) and an optional ceiling on such sessions' length.",
  params: Params,
  returns: Type.Object({ sessionProfileId: Type.String() }),
  check(p) {
    // Blank is no condition at all: a scope must say what it allows ("true" allows everything).
    if (!/\S/.test(p.scope))
      throw invalid("invalid session profile scope: must be a policy-language condition, e.g. true", [
        { field: "parameters.scope", description: "must not be blank" },
      ]);
    checkExpressions({ condition: p.scope }, "parameters", { condition: "scope", consensus: "", time: "" });
  },
  async execute(ctx, p) {
    const { tx, organization, now } = ctx;
    const expiration =
      p.expirationSeconds === undefined
        ? null
        : String(sessionSeconds(p.expirationSeconds, ctx.services.logins.sessionMaxSeconds, "parameters.expirationSeconds"));
    // Count-then-insert under the organization lock: concurrent creators count one after the other.
    await lockOrganization(tx, organization.id);
    if ((await countSessionProfiles(tx, organization.id)) >= MAX_SESSION_PROFILES_PER_ORGANIZATION) {
      throw exhausted(`organization ${organization.id} already has ${MAX_SESSION_PROFILES_PER_ORGANIZATION} session profiles, the maximum`);
    }
    const id = newId();
    await insertSessionProfile(tx, {
      id,
      organization_id: organization.id,
      name: p.sessionProfileName,
      scope: p.scope,
      expiration_seconds: expiration,
      notes: p.notes ?? null,
      created_at: now,
    });
    return { sessionProfileId: id };
  },
});

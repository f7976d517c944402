// get_session_profile / get_session_profiles (docs/sessions-and-network.md §6.1): the profiles an
// organization's logins may name — its own and those of the organizations above it (upstream:
// sub-organizations see their parent's profiles). Another tenant's profile is not found.
import { Type } from "@sinclair/typebox";
import { notFound } from "../errors.ts";
import { Id, OrganizationId } from "../schemas/common.ts";
import { sessionProfileView, visibleSessionProfile, visibleSessionProfiles } from "../store/session-profiles.ts";
import { defineQuery } from "./define.ts";

const SessionProfile = Type.Object({
  sessionProfileId: Type.String(),
  sessionProfileName: Type.String(),
  scope: Type.String(),
  expirationSeconds: Type.Optional(Type.String()),
  notes: Type.Optional(Type.String()),
  createdAt: Type.Object({ seconds: Type.String(), nanos: Type.String() }),
  updatedAt: Type.Object({ seconds: Type.String(), nanos: Type.String() }),
});

export const getSessionProfile = defineQuery({
  op: "get_session_profile",
  summary: "Get a session profile the organization may use (its own or an ancestor's).",
  request: Type.Object({ organizationId: OrganizationId, sessionProfileId: Id("session profile") }),
  response: Type.Object({ sessionProfile: SessionProfile }),
  async run({ db, state, organization }, req) {
    const row = await visibleSessionProfile(db, organization.id, req.sessionProfileId, state.chains);
    if (!row) throw notFound(`no session profile ${req.sessionProfileId} in organization ${organization.id} or the organizations above it`);
    return { sessionProfile: sessionProfileView(row) };
  },
});

export const getSessionProfiles = defineQuery({
  op: "get_session_profiles",
  summary: "List the session profiles the organization may use (its own and its ancestors'), oldest first.",
  request: Type.Object({ organizationId: OrganizationId }),
  response: Type.Object({ sessionProfiles: Type.Array(SessionProfile) }),
  async run({ db, state, organization }) {
    return { sessionProfiles: (await visibleSessionProfiles(db, organization.id, state.chains)).map(sessionProfileView) };
  },
});

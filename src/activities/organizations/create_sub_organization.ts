import { Type, type Static } from "@sinclair/typebox";
import { invalid, precondition } from "../../errors.ts";
import { Name, maxItems } from "../../schemas/common.ts";
import { insertOrganization, organizationChain, setRootQuorum, MAX_ORGANIZATION_DEPTH } from "../../store/organizations.ts";
import { newId } from "../../store/util.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { addUsers } from "../users/new-users.ts";
import { MAX_USERS_PER_REQUEST, RootUserParams } from "../users/user-schemas.ts";

const Params = Type.Object({
  subOrganizationName: Name("subOrganizationName"),
  rootUsers: maxItems(RootUserParams, "rootUsers", MAX_USERS_PER_REQUEST, 1),
  rootQuorumThreshold: Type.Integer({ minimum: 1, errorMessage: "must be a positive integer" }),
  wallet: Type.Optional(Type.Unknown()),
  disableEmailRecovery: Type.Optional(Type.Boolean()),
  disableEmailAuth: Type.Optional(Type.Boolean()),
  disableSmsAuth: Type.Optional(Type.Boolean()),
  disableOtpEmailAuth: Type.Optional(Type.Boolean()),
  verificationToken: Type.Optional(Type.String()),
  clientSignature: Type.Optional(Type.Unknown()),
});

const SETTINGS = ["disableEmailRecovery", "disableEmailAuth", "disableSmsAuth", "disableOtpEmailAuth"] as const;

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  if (p.rootQuorumThreshold > p.rootUsers.length) {
    throw invalid("rootQuorumThreshold must not exceed the number of root users", [
      { field: "parameters.rootQuorumThreshold", description: `must be between 1 and ${p.rootUsers.length}` },
    ]);
  }
  for (const field of ["wallet", "verificationToken", "clientSignature"] as const) {
    if (p[field] !== undefined) {
      throw invalid(`parameters.${field}: not supported by this server yet; omit it`, [
        { field: `parameters.${field}`, description: "not supported yet" },
      ]);
    }
  }
  const depth = (await organizationChain(ctx.tx, ctx.organization.id, ctx.chains)).length;
  if (depth >= MAX_ORGANIZATION_DEPTH) {
    throw precondition(`organizations nest at most ${MAX_ORGANIZATION_DEPTH} levels deep`);
  }
  const settings: Record<string, boolean> = {};
  for (const s of SETTINGS) if (p[s] !== undefined) settings[s] = p[s];

  const subOrganizationId = newId();
  await insertOrganization(ctx.tx, {
    id: subOrganizationId,
    name: p.subOrganizationName,
    parent_id: ctx.organization.id,
    root_quorum_threshold: p.rootQuorumThreshold,
    policy_version: 0,
    settings: JSON.stringify(settings),
    created_at: ctx.now,
    updated_at: ctx.now,
  });
  const rootUserIds = await addUsers(ctx.tx, subOrganizationId, p.rootUsers, ctx.now, "parameters.rootUsers");
  await setRootQuorum(ctx.tx, subOrganizationId, rootUserIds);
  return { subOrganizationId, rootUserIds };
}

const Result = Type.Object({ subOrganizationId: Type.String(), rootUserIds: Type.Array(Type.String()) });

const common = {
  resource: "ORGANIZATION",
  action: "CREATE",
  kind: "CREATE_SUB_ORGANIZATION",
  params: Params,
  returns: Result,
  execute,
};

export const createSubOrganizationV8 = defineActivity({
  ...common,
  type: "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8",
  result: "createSubOrganizationResultV8",
  summary: "Create a sub-organization with its root users and root quorum (the version current SDKs send).",
});

export const createSubOrganizationV7 = defineActivity({
  ...common,
  type: "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7",
  result: "createSubOrganizationResultV7",
  summary: "Create a sub-organization (the version deployed older clients send).",
});

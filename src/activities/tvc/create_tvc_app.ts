// create_tvc_app (docs/tvc.md §2): an app over two operator sets — the manifest set, whose
// operators approve deployments, and the share set, who hold shares of the quorum key. Each
// set is an existing one of the organization (…SetId) or a new one (…SetParams); a new set
// identical (name, threshold, members) to an existing one is that one. A new operator whose
// key the organization already has is that operator when the names agree; a different name
// is refused (the key would otherwise silently answer to two names).
import { Type, type Static } from "@sinclair/typebox";
import { alreadyExists, invalid } from "../../errors.ts";
import { Name } from "../../schemas/common.ts";
import { insertApp, insertOrGetOperator, insertOrGetOperatorSet, operatorsById, operatorSets } from "../../store/tvc.ts";
import { isUniqueViolation, newOrderedId } from "../../store/util.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { TVC_SCOPE } from "./gate.ts";
import { checkSetParams, checkThreshold, intOf, oneOf, OperatorSetParams, P256Hex, p256Field, type OperatorSetParamsT } from "./fields.ts";

const Params = Type.Object({
  name: Name("name"),
  quorumPublicKey: P256Hex("quorumPublicKey"),
  manifestSetId: Type.Optional(Type.String({ maxLength: 64 })),
  manifestSetParams: Type.Optional(OperatorSetParams),
  shareSetId: Type.Optional(Type.String({ maxLength: 64 })),
  shareSetParams: Type.Optional(OperatorSetParams),
  enableEgress: Type.Optional(Type.Boolean()),
  enableDebugModeDeployments: Type.Optional(Type.Boolean()),
});
type P = Static<typeof Params>;

const SETS = [
  { idField: "manifestSetId", paramsField: "manifestSetParams", minThreshold: 1 },
  { idField: "shareSetId", paramsField: "shareSetParams", minThreshold: 2 },
] as const;

function check(p: P): void {
  p256Field(p.quorumPublicKey, "parameters.quorumPublicKey");
  for (const s of SETS) {
    if (oneOf(p[s.idField], p[s.paramsField], s.idField, s.paramsField) === "params") {
      checkSetParams(p[s.paramsField]!, `parameters.${s.paramsField}`, s.minThreshold);
    }
  }
}

interface ResolvedSet {
  id: string;
  operatorIds: string[];
  threshold: number;
}

async function existingSet(ctx: ExecuteContext, id: string, field: string, minThreshold: number): Promise<ResolvedSet> {
  const set = (await operatorSets(ctx.tx, ctx.organization.id, [id])).get(id);
  if (!set)
    throw invalid(`${field}: no operator set ${id} in organization ${ctx.organization.id}`, [
      { field, description: "must name an operator set of this organization" },
    ]);
  checkThreshold(set.threshold, set.operators.length, field, minThreshold);
  return { id: set.id, operatorIds: set.operators.map((o) => o.id), threshold: set.threshold };
}

async function newSet(ctx: ExecuteContext, p: OperatorSetParamsT, at: string, minThreshold: number): Promise<ResolvedSet> {
  const { tx, organization, now } = ctx;
  const keys = checkSetParams(p, at, minThreshold);
  const existingIds = (p.existingOperatorIds ?? []).map((id) => id.toLowerCase());
  const found = await operatorsById(tx, organization.id, existingIds);
  existingIds.forEach((id, i) => {
    if (!found.has(id)) {
      const field = `${at}.existingOperatorIds[${i}]`;
      throw invalid(`${field}: no operator ${id} in organization ${organization.id}`, [
        { field, description: "must name an operator of this organization" },
      ]);
    }
  });
  const members = [...existingIds];
  const index = new Map(existingIds.map((id, i) => [id, `existingOperatorIds[${i}]`]));
  for (const [i, o] of (p.newOperators ?? []).entries()) {
    const field = `${at}.newOperators[${i}].publicKey`;
    const { operator, created } = await insertOrGetOperator(tx, organization.id, o.name, keys[i]!, now);
    if (!created && operator.name !== o.name) {
      throw invalid(
        `${field}: the organization's operator ${operator.id} already has this key, under the name ${JSON.stringify(operator.name)}; use that name or list it in existingOperatorIds`,
        [{ field, description: "key already belongs to an operator with another name" }],
      );
    }
    const twin = index.get(operator.id);
    if (twin)
      throw invalid(`${field}: operator ${operator.id} is already in the set as ${twin}`, [
        { field, description: "an operator may appear only once in a set" },
      ]);
    index.set(operator.id, `newOperators[${i}]`);
    members.push(operator.id);
  }
  const threshold = intOf(p.threshold);
  const { setId } = await insertOrGetOperatorSet(tx, organization.id, p.name, threshold, members, now);
  // A reused set has the members just computed (they define its identity), in its own order.
  const stored = (await operatorSets(tx, organization.id, [setId])).get(setId)!;
  return { id: setId, operatorIds: stored.operators.map((o) => o.id), threshold };
}

async function execute(ctx: ExecuteContext, p: P) {
  const resolved: ResolvedSet[] = [];
  for (const s of SETS) {
    const id = p[s.idField];
    resolved.push(
      id !== undefined && id !== ""
        ? await existingSet(ctx, id.toLowerCase(), `parameters.${s.idField}`, s.minThreshold)
        : await newSet(ctx, p[s.paramsField]!, `parameters.${s.paramsField}`, s.minThreshold),
    );
  }
  const [manifestSet, shareSet] = resolved as [ResolvedSet, ResolvedSet];
  const appId = newOrderedId(ctx.now);
  try {
    await insertApp(ctx.tx, {
      id: appId,
      organization_id: ctx.organization.id,
      name: p.name,
      quorum_public_key: p.quorumPublicKey.toLowerCase(),
      manifest_set_id: manifestSet.id,
      share_set_id: shareSet.id,
      enable_egress: p.enableEgress ? 1 : 0,
      enable_debug_mode_deployments: p.enableDebugModeDeployments ? 1 : 0,
      live_deployment_id: null,
      deleted_at: null,
      created_at: ctx.now,
      updated_at: ctx.now,
    });
  } catch (err) {
    if (isUniqueViolation(err, "tvc_apps"))
      throw alreadyExists(`parameters.name: a TVC app named ${JSON.stringify(p.name)} already exists in the organization`);
    throw err;
  }
  return {
    appId,
    manifestSetId: manifestSet.id,
    manifestSetOperatorIds: manifestSet.operatorIds,
    manifestSetThreshold: manifestSet.threshold,
    shareSetId: shareSet.id,
    shareSetOperatorIds: shareSet.operatorIds,
    shareSetThreshold: shareSet.threshold,
  };
}

export const createTvcApp = defineActivity({
  type: "ACTIVITY_TYPE_CREATE_TVC_APP",
  resource: "TVC_APP",
  scope: TVC_SCOPE,
  action: "CREATE",
  kind: "CREATE_TVC_APP",
  summary:
    "Create a TVC app with its manifest set and share set of operators (existing sets by id, or new ones; identical sets are reused).",
  params: Params,
  returns: Type.Object({
    appId: Type.String(),
    manifestSetId: Type.String(),
    manifestSetOperatorIds: Type.Array(Type.String()),
    manifestSetThreshold: Type.Integer(),
    shareSetId: Type.String(),
    shareSetOperatorIds: Type.Array(Type.String()),
    shareSetThreshold: Type.Integer(),
  }),
  check,
  execute,
});

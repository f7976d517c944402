/// <reference lib="dom" />
// #/org/<id>/policies/new and #/org/<id>/policies/<policyId>: the policy editor. As you type,
// check_policy compiles the draft (debounced; nothing saved) and each error is shown at its
// field, line and column; the dry run (dry_run_policies) replays recorded activities through
// today's policies and the draft and lists those whose outcome would change, with both; a
// single intent not yet submitted can be tried the same way; save is create_policy or
// update_policy, stamped by the user (it may itself wait for consensus).
import { useEffect, useRef, useState } from "preact/hooks";
import type { Json } from "../api.ts";
import { navigate, type PageProps } from "../page.ts";
import { ErrorBanner, fmtTime, h, Loading, orgHref, ReadOnlyNote, Section, statusLabel, typeLabel, useLoad, type VNode } from "../ui.ts";
import { outcomeClass, outcomeLabel } from "./activity.ts";

/** How long typing pauses before the draft is checked. */
const CHECK_DELAY_MS = 300;

interface Draft {
  policyName: string;
  effect: string;
  condition: string;
  consensus: string;
  /** The optional time expression (docs/policy-language.md). */
  time: string;
  notes: string;
}

interface CheckError {
  field: string;
  message: string;
  line: number;
  column: number;
  offset: number;
}

const EMPTY: Draft = { policyName: "", effect: "EFFECT_ALLOW", condition: "", consensus: "", time: "", notes: "" };

/** The draft as dry_run_policies' proposal: an added policy, or an update of this one. */
function proposalOf(policyId: string | undefined, d: Draft): Json {
  const fields = {
    policyName: d.policyName || "draft",
    effect: d.effect,
    condition: d.condition,
    consensus: d.consensus,
    notes: d.notes,
    ...(d.time ? { time: d.time } : {}),
  };
  return policyId ? { update: [{ policyId, ...fields }] } : { add: [fields] };
}

/** The error's line of the draft with a caret under its column (line and column 1-based), or nothing. */
function caret(text: string, e: CheckError): VNode | null {
  const line = text.split("\n")[e.line - 1];
  if (line === undefined || e.column < 1 || e.column > line.length + 1) return null;
  return h("pre", { class: "caret" }, `${line}\n${" ".repeat(e.column - 1)}^`);
}

function Outcome(props: { o: string | undefined }): VNode {
  return h("span", { class: outcomeClass(props.o ?? "") }, outcomeLabel(props.o ?? ""));
}

export function PolicyEditorPage(p: PageProps): VNode {
  const policyId = p.params.policyId;
  const existing = useLoad(
    () =>
      policyId ? p.api.query<{ policy: Json }>("get_policy", p.orgId, { policyId }).then((r) => r.policy) : Promise.resolve(undefined),
    [p.orgId, policyId],
  );
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const loaded = useRef(false);
  useEffect(() => {
    const pol = existing.data;
    if (pol && !loaded.current) {
      loaded.current = true;
      setDraft({
        policyName: pol.policyName,
        effect: pol.effect,
        condition: pol.condition,
        consensus: pol.consensus,
        time: pol.time ?? "",
        notes: pol.notes ?? "",
      });
    }
  }, [existing.data]);

  // check_policy as you type: the latest draft only (an older answer arriving late is dropped).
  const [check, setCheck] = useState<{ valid: boolean; errors: CheckError[]; iterations?: Json } | undefined>(undefined);
  const [checkError, setCheckError] = useState<unknown>(undefined);
  const checkSeq = useRef(0);
  useEffect(() => {
    const seq = ++checkSeq.current;
    const timer = setTimeout(() => {
      p.api
        .query<{ valid: boolean; errors: CheckError[]; iterations?: Json }>("check_policy", p.orgId, {
          effect: draft.effect,
          condition: draft.condition,
          consensus: draft.consensus,
          ...(draft.time ? { time: draft.time } : {}),
        })
        .then(
          (r) => {
            if (seq !== checkSeq.current) return;
            setCheck(r);
            setCheckError(undefined);
          },
          (err: unknown) => {
            if (seq !== checkSeq.current) return;
            setCheck(undefined);
            setCheckError(err);
          },
        );
    }, CHECK_DELAY_MS);
    return () => clearTimeout(timer);
  }, [p.orgId, draft.effect, draft.condition, draft.consensus, draft.time]);

  const [dry, setDry] = useState<Json | undefined>(undefined);
  const [dryBusy, setDryBusy] = useState(false);
  const [dryError, setDryError] = useState<unknown>(undefined);
  // The proposal of the last dry run: "Replay more" reads on with the same one.
  const [dryProposal, setDryProposal] = useState<Json | undefined>(undefined);
  const runDry = async (proposal: Json, after?: string) => {
    setDryBusy(true);
    setDryError(undefined);
    try {
      const r = await p.api.query<Json>("dry_run_policies", p.orgId, { proposal, ...(after ? { paginationOptions: { after } } : {}) });
      setDryProposal(proposal);
      setDry(
        after && dry
          ? { ...r, replayed: Number(dry.replayed) + Number(r.replayed), changed: [...(dry.changed as Json[]), ...(r.changed as Json[])] }
          : r,
      );
    } catch (err) {
      setDryError(err);
    } finally {
      setDryBusy(false);
    }
  };

  const [intentText, setIntentText] = useState("");
  const [intentResult, setIntentResult] = useState<Json | undefined>(undefined);
  const [intentError, setIntentError] = useState<unknown>(undefined);
  const tryIntent = async () => {
    setIntentError(undefined);
    setIntentResult(undefined);
    try {
      let intent: unknown;
      try {
        intent = JSON.parse(intentText);
      } catch {
        throw new Error('the intent must be JSON: {"type": "ACTIVITY_TYPE_…", "parameters": {…}, "userId"?: "…"}');
      }
      const r = await p.api.query<Json>("dry_run_policies", p.orgId, {
        proposal: proposalOf(policyId, draft),
        intent,
        window: { last: 1 },
      });
      setIntentResult(r.intent as Json);
    } catch (err) {
      setIntentError(err);
    }
  };

  const [saved, setSaved] = useState<Json | undefined>(undefined);
  const [saveError, setSaveError] = useState<unknown>(undefined);
  const [saving, setSaving] = useState(false);
  const save = async () => {
    setSaving(true);
    setSaveError(undefined);
    try {
      const activity = policyId
        ? await p.api.submit("update_policy", "ACTIVITY_TYPE_UPDATE_POLICY_V2", p.orgId, {
            policyId,
            policyName: draft.policyName,
            policyEffect: draft.effect,
            policyCondition: draft.condition,
            policyConsensus: draft.consensus,
            policyNotes: draft.notes,
            time: draft.time,
          })
        : await p.api.submit("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", p.orgId, {
            policyName: draft.policyName,
            effect: draft.effect,
            condition: draft.condition,
            consensus: draft.consensus,
            notes: draft.notes,
            ...(draft.time ? { time: draft.time } : {}),
          });
      setSaved(activity);
    } catch (err) {
      setSaveError(err);
    } finally {
      setSaving(false);
    }
  };
  const savedId = saved
    ? ((Object.values(saved.result ?? {}) as Json[]).find((r) => r && typeof r.policyId === "string")?.policyId as string | undefined)
    : undefined;

  const set = (k: keyof Draft) => (e: Event) => {
    const v = (e.currentTarget as HTMLInputElement).value;
    setDraft((d) => ({ ...d, [k]: v }));
    setSaved(undefined);
  };
  const errors = check?.errors ?? [];
  const fieldErrors = (field: string) =>
    errors
      .filter((e) => e.field === field)
      .map((e, i) =>
        h(
          "div",
          {
            key: i,
            class: "policy-error",
            "data-testid": "policy-error",
            "data-field": e.field,
            "data-line": String(e.line),
            "data-column": String(e.column),
          },
          `line ${e.line}, column ${e.column}: ${e.message}`,
          caret(field === "condition" || field === "consensus" || field === "time" ? draft[field] : "", e),
        ),
      );
  const textarea = (k: "condition" | "consensus" | "time", label: string, hint: string) =>
    h(
      "label",
      null,
      label,
      h("span", { class: "muted" }, ` — ${hint}`),
      h("textarea", { class: "code", "data-testid": `policy-${k}`, value: draft[k], spellcheck: false, rows: 5, onInput: set(k) }),
      fieldErrors(k),
    );

  if (policyId && existing.loading && !existing.data) return h(Loading, { what: "the policy" });
  const changed = (dry?.changed as Json[] | undefined) ?? [];
  return h(
    "div",
    { class: "editor" },
    h("p", null, h("a", { href: orgHref(p.orgId, "policies") }, "← Policies")),
    h("h1", null, policyId ? `Policy ${existing.data?.policyName ?? policyId}` : "New policy"),
    h(ReadOnlyNote, { readOnly: p.readOnly }),
    h(ErrorBanner, { error: existing.error }),
    h(
      Section,
      { title: "Draft" },
      h("label", null, "Name", h("input", { "data-testid": "policy-name", value: draft.policyName, onInput: set("policyName"), size: 40 })),
      h(
        "label",
        null,
        "Effect",
        h(
          "select",
          { "data-testid": "policy-effect", value: draft.effect, onChange: set("effect") },
          h("option", { value: "EFFECT_ALLOW" }, "allow"),
          h("option", { value: "EFFECT_DENY" }, "deny"),
        ),
        fieldErrors("effect"),
      ),
      textarea("condition", "Condition", "when the policy applies (empty: always)"),
      textarea("consensus", "Consensus", "who must approve (empty: no one else)"),
      textarea("time", "Time", "when the policy is in force (empty: always)"),
      h("label", null, "Notes", h("input", { "data-testid": "policy-notes", value: draft.notes, onInput: set("notes"), size: 60 })),
      h(ErrorBanner, { error: checkError }),
      check?.valid && errors.length === 0
        ? h(
            "p",
            { class: "policy-valid", "data-testid": "policy-valid" },
            "Compiles.",
            check.iterations && Object.keys(check.iterations).length > 0
              ? h(
                  "span",
                  { class: "muted" },
                  ` Worst-case iterations: ${Object.entries(check.iterations)
                    .map(([k, v]) => `${k} ${String(v)}`)
                    .join(", ")}.`,
                )
              : null,
          )
        : null,
      h(
        "div",
        { class: "actions" },
        h(
          "button",
          {
            type: "button",
            class: "secondary",
            "data-testid": "dry-run-button",
            disabled: dryBusy || !check?.valid,
            onClick: () => void runDry(proposalOf(policyId, draft)),
          },
          dryBusy ? "Replaying…" : "Dry run",
        ),
        policyId
          ? h(
              "button",
              {
                type: "button",
                class: "secondary",
                "data-testid": "dry-run-delete-button",
                disabled: dryBusy,
                onClick: () => void runDry({ delete: [policyId] }),
              },
              "Dry run without this policy",
            )
          : null,
        p.readOnly
          ? null
          : h(
              "button",
              {
                type: "button",
                "data-testid": "policy-save",
                disabled: saving || !check?.valid || !draft.policyName,
                onClick: () => void save(),
              },
              policyId ? "Save changes" : "Create policy",
            ),
      ),
      h(ErrorBanner, { error: saveError }),
      saved
        ? h(
            "p",
            { "data-testid": "save-result", "data-status": saved.status },
            `${statusLabel(String(saved.status))}`,
            savedId
              ? h(
                  "span",
                  null,
                  " · policy ",
                  h("code", { "data-testid": "saved-policy-id" }, savedId),
                  " ",
                  h(
                    "a",
                    {
                      href: orgHref(p.orgId, `policies/${encodeURIComponent(savedId)}`),
                      onClick: (e: Event) => (e.preventDefault(), navigate(orgHref(p.orgId, `policies/${encodeURIComponent(savedId)}`))),
                    },
                    "open",
                  ),
                )
              : null,
            saved.status === "ACTIVITY_STATUS_CONSENSUS_NEEDED"
              ? h(
                  "span",
                  null,
                  " · waits for approval: ",
                  h("a", { href: orgHref(p.orgId, `activities/${encodeURIComponent(saved.id)}`) }, "the activity"),
                )
              : null,
          )
        : null,
    ),
    h(
      Section,
      { title: "Dry run" },
      h(
        "p",
        { class: "muted" },
        "Replays recorded activities (the last 1,000 by default) through today's policies and through the draft, and lists each activity whose outcome would change.",
      ),
      h(ErrorBanner, { error: dryError }),
      dry
        ? h(
            "div",
            {
              "data-testid": "dry-run-result",
              "data-replayed": String(dry.replayed),
              "data-changed": String(changed.length),
              "data-complete": String(dry.complete),
            },
            h(
              "p",
              null,
              `${String(dry.replayed)} activities replayed; ${changed.length} would change.`,
              dry.skipped ? ` ${String(dry.skipped)} decided by a parent organization's policies were not replayed.` : "",
              dry.complete === false ? " The replay stopped at a bound: not every activity of the window was replayed." : "",
            ),
            changed.length > 0
              ? h(
                  "table",
                  null,
                  h(
                    "thead",
                    null,
                    h(
                      "tr",
                      null,
                      ["Activity", "Created", "Status", "Today", "With the draft"].map((c) => h("th", { key: c }, c)),
                    ),
                  ),
                  h(
                    "tbody",
                    null,
                    changed.map((c) =>
                      h(
                        "tr",
                        {
                          key: c.activityId,
                          "data-testid": "dry-run-changed-row",
                          "data-activity-id": c.activityId,
                          "data-before": c.before?.outcome,
                          "data-after": c.after?.outcome,
                        },
                        h(
                          "td",
                          null,
                          h(
                            "a",
                            { href: orgHref(p.orgId, `activities/${encodeURIComponent(c.activityId)}`) },
                            typeLabel(String(c.type ?? "")),
                          ),
                          h("div", { class: "muted" }, h("code", null, c.activityId)),
                        ),
                        h("td", null, fmtTime(c.createdAt)),
                        h("td", null, statusLabel(String(c.status ?? ""))),
                        h("td", null, h(Outcome, { o: c.before?.outcome })),
                        h("td", null, h(Outcome, { o: c.after?.outcome })),
                      ),
                    ),
                  ),
                )
              : null,
            dry.nextCursor
              ? h(
                  "button",
                  {
                    type: "button",
                    class: "secondary",
                    disabled: dryBusy,
                    onClick: () => void runDry(dryProposal ?? proposalOf(policyId, draft), String(dry.nextCursor)),
                  },
                  "Replay more",
                )
              : null,
          )
        : null,
      h("h2", null, "Would this be allowed?"),
      h(
        "label",
        null,
        h(
          "span",
          { class: "muted" },
          'An intent not yet submitted, as JSON: {"type": "ACTIVITY_TYPE_…", "parameters": {…}, "userId": "…" (default: you)}',
        ),
        h("textarea", {
          class: "code",
          "data-testid": "dry-run-intent",
          value: intentText,
          rows: 4,
          spellcheck: false,
          onInput: (e: Event) => setIntentText((e.currentTarget as HTMLTextAreaElement).value),
        }),
      ),
      h(
        "div",
        { class: "actions" },
        h(
          "button",
          {
            type: "button",
            class: "secondary",
            "data-testid": "dry-run-intent-button",
            disabled: !check?.valid || !intentText.trim(),
            onClick: () => void tryIntent(),
          },
          "Evaluate",
        ),
      ),
      h(ErrorBanner, { error: intentError }),
      intentResult
        ? h(
            "p",
            {
              "data-testid": "dry-run-intent-result",
              "data-before": intentResult.before?.outcome,
              "data-after": intentResult.after?.outcome,
            },
            "Today: ",
            h(Outcome, { o: intentResult.before?.outcome }),
            " · with the draft: ",
            h(Outcome, { o: intentResult.after?.outcome }),
          )
        : null,
    ),
  );
}

/// <reference lib="dom" />
// #/org/<id>/activities/<activityId>: intent, result, votes (get_activity) and the evaluation
// record explained (explain_activity): every policy's outcome, the deciding one, and for a
// policy that did not match, the false part in words and the policy's text with each false
// span marked (docs/console.md §5).
import { useState } from "preact/hooks";
import type { Json } from "../api.ts";
import type { PageProps } from "../page.ts";
import {
  ErrorBanner,
  fmtTime,
  h,
  Json as JsonView,
  Loading,
  orgHref,
  Section,
  shortEnum,
  timeMs,
  typeLabel,
  useLoad,
  type VNode,
} from "../ui.ts";

/** `text` with each span (UTF-16 offsets, clamped, overlapping ones merged) in a <mark>. */
export function highlighted(text: string, spans: readonly { start: number; end: number }[], testid?: string): (string | VNode)[] {
  const sorted = spans
    .map((s) => ({
      start: Math.max(0, Math.min(text.length, Math.floor(s.start))),
      end: Math.max(0, Math.min(text.length, Math.floor(s.end))),
    }))
    .filter((s) => s.end > s.start)
    .sort((a, b) => a.start - b.start);
  const merged: { start: number; end: number }[] = [];
  for (const s of sorted) {
    const prev = merged[merged.length - 1];
    if (prev && s.start <= prev.end) prev.end = Math.max(prev.end, s.end);
    else merged.push({ ...s });
  }
  const out: (string | VNode)[] = [];
  let at = 0;
  for (const s of merged) {
    if (s.start > at) out.push(text.slice(at, s.start));
    out.push(h("mark", testid ? { "data-testid": testid } : null, text.slice(s.start, s.end)));
    at = s.end;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

export const outcomeClass = (o: string) =>
  o === "OUTCOME_ALLOW" ? "outcome-allow" : o.startsWith("OUTCOME_DENY") || o === "OUTCOME_ERROR" ? "outcome-deny" : "outcome-other";
export const outcomeLabel = (o: string) => shortEnum(o ?? "", "OUTCOME_");

/** One evaluation: its outcome and each policy's; `latest` carries the test ids (only one evaluation does). */
function Evaluation(props: { ev: Json; latest: boolean; orgId: string }): VNode {
  const { ev, latest } = props;
  const t = (id: string) => (latest ? { "data-testid": id } : {});
  return h(
    "div",
    { ...t("evaluation"), "data-outcome": ev.outcome, class: "evaluation" },
    h(
      "p",
      null,
      "Outcome: ",
      h("span", { class: outcomeClass(ev.outcome) }, outcomeLabel(ev.outcome)),
      ev.createdAt ? ` · evaluated ${fmtTime(ev.createdAt)}` : "",
      ev.decidingPolicyId ? " · decided by " : " · no policy decided",
      ev.decidingPolicyId ? h("code", null, ev.decidingPolicyId) : null,
    ),
    h(
      "table",
      null,
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          ["Policy", "Effect", "Outcome", "Why"].map((c) => h("th", { key: c }, c)),
        ),
      ),
      h(
        "tbody",
        null,
        (ev.policies as Json[]).map((pol) => {
          const x = pol.explanation as Json | undefined;
          // The explained field's text (condition, consensus or time); without an explanation, the condition.
          const field = x?.field === "consensus" || x?.field === "time" ? String(x.field) : "condition";
          const text = String(pol[field] ?? "");
          return h(
            "tr",
            { key: pol.policyId, class: pol.policyId === ev.decidingPolicyId ? "deciding" : "" },
            h(
              "td",
              null,
              pol.deleted
                ? h("span", null, pol.policyName || pol.policyId)
                : h("a", { href: orgHref(props.orgId, `policies/${encodeURIComponent(pol.policyId)}`) }, pol.policyName || pol.policyId),
              pol.policyId === ev.decidingPolicyId ? h("div", { class: "muted" }, "deciding") : null,
              pol.deleted
                ? h("div", { class: "note" }, "deleted since")
                : pol.changedSinceEvaluation
                  ? h("div", { class: "note" }, "changed since: the text below is today's")
                  : null,
            ),
            h("td", null, shortEnum(String(pol.effect ?? ""), "EFFECT_")),
            h(
              "td",
              { ...t("policy-outcome"), "data-policy-id": pol.policyId, "data-outcome": pol.outcome, class: outcomeClass(pol.outcome) },
              outcomeLabel(pol.outcome),
            ),
            h(
              "td",
              null,
              x ? h("p", { ...t("explanation"), "data-field": field }, x.words) : null,
              text
                ? h(
                    "pre",
                    { class: "policy", "data-field": field },
                    x
                      ? highlighted(
                          text,
                          (x.spans as { start: number; end: number }[] | undefined) ?? [],
                          latest ? "policy-highlight" : undefined,
                        )
                      : text,
                  )
                : null,
              !x && pol.consensus && field !== "consensus" ? h("pre", { class: "policy" }, `consensus: ${String(pol.consensus)}`) : null,
            ),
          );
        }),
      ),
    ),
  );
}

/** Approve or reject from the activity's own page, when the server says the user may (the approvals page's vote). */
function Vote(props: { p: PageProps; a: Json; onVoted: () => void }): VNode | null {
  const { p, a } = props;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  if (p.readOnly || !(a.canApprove || a.canReject)) return null;
  const vote = async (approve: boolean) => {
    setBusy(true);
    setError(undefined);
    try {
      await p.api.submit(
        approve ? "approve_activity" : "reject_activity",
        approve ? "ACTIVITY_TYPE_APPROVE_ACTIVITY" : "ACTIVITY_TYPE_REJECT_ACTIVITY",
        p.orgId,
        { fingerprint: a.fingerprint },
      );
      props.onVoted();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return h(
    Section,
    { title: "Your vote" },
    h(ErrorBanner, { error }),
    h(
      "div",
      { class: "actions" },
      a.canApprove
        ? h("button", { type: "button", "data-testid": "activity-approve", disabled: busy, onClick: () => void vote(true) }, "Approve")
        : null,
      a.canReject
        ? h(
            "button",
            { type: "button", class: "danger", "data-testid": "activity-reject", disabled: busy, onClick: () => void vote(false) },
            "Reject",
          )
        : null,
    ),
  );
}

export function ActivityPage(p: PageProps): VNode {
  const activityId = p.params.activityId!;
  const load = useLoad(
    () => p.api.query<{ activity: Json }>("get_activity", p.orgId, { activityId }).then((r) => r.activity),
    [p.orgId, activityId],
  );
  const explain = useLoad(() => p.api.query<Json>("explain_activity", p.orgId, { activityId }), [p.orgId, activityId]);
  const a = load.data;
  // Oldest first; the latest is the one shown in full.
  const evaluations = ((explain.data?.evaluations as Json[] | undefined) ?? []).slice().sort((x, y) => {
    const d = timeMs(x.createdAt) - timeMs(y.createdAt);
    return Number.isFinite(d) ? d : 0;
  });
  const latest = evaluations.pop();
  return h(
    "div",
    null,
    h("p", null, h("a", { href: orgHref(p.orgId, "activities") }, "← Activities")),
    h(ErrorBanner, { error: load.error }),
    load.loading && !a ? h(Loading, null) : null,
    a
      ? h(
          "div",
          null,
          h("h1", null, typeLabel(a.type)),
          h(
            "dl",
            { class: "facts" },
            h(
              "div",
              null,
              h("dt", null, "Status"),
              h("dd", { "data-testid": "activity-status", "data-status": a.status, class: "status" }, a.status),
            ),
            h("div", null, h("dt", null, "Created"), h("dd", null, fmtTime(a.createdAt))),
            h("div", null, h("dt", null, "Id"), h("dd", null, h("code", null, a.id))),
          ),
          h(Vote, {
            p,
            a,
            onVoted: () => {
              load.reload();
              explain.reload();
            },
          }),
          h(Section, { title: "Intent" }, h(JsonView, { value: a.intent })),
          a.failure ? h(Section, { title: "Failure" }, h(JsonView, { value: a.failure })) : null,
          Object.keys(a.result ?? {}).length > 0 ? h(Section, { title: "Result" }, h(JsonView, { value: a.result })) : null,
          h(
            Section,
            { title: "Votes" },
            (a.votes as Json[]).length === 0
              ? h("p", { class: "muted" }, "None.")
              : h(
                  "table",
                  null,
                  h(
                    "thead",
                    null,
                    h(
                      "tr",
                      null,
                      ["User", "Vote", "Key", "When"].map((c) => h("th", { key: c }, c)),
                    ),
                  ),
                  h(
                    "tbody",
                    null,
                    (a.votes as Json[]).map((v) =>
                      h(
                        "tr",
                        { key: v.id, "data-testid": "vote-row", "data-user-id": v.userId, "data-selection": v.selection },
                        h("td", null, v.user?.userName ?? v.userId),
                        h("td", null, shortEnum(v.selection, "VOTE_SELECTION_")),
                        h("td", null, h("code", null, v.publicKey)),
                        h("td", null, fmtTime(v.createdAt)),
                      ),
                    ),
                  ),
                ),
          ),
        )
      : null,
    h(
      Section,
      { title: "Policy evaluation" },
      h(ErrorBanner, { error: explain.error }),
      explain.loading && !explain.data ? h(Loading, null) : null,
      latest
        ? h(Evaluation, { ev: latest, latest: true, orgId: p.orgId })
        : explain.data
          ? h("p", { class: "muted" }, "No evaluation was recorded for this activity.")
          : null,
      latest ? h("p", { class: "muted" }, "Policy texts are today's; a policy changed since the evaluation shows its new text.") : null,
      evaluations.length > 0
        ? h(
            "details",
            null,
            h("summary", null, `${evaluations.length} earlier evaluation${evaluations.length === 1 ? "" : "s"}`),
            evaluations.reverse().map((ev, i) => h(Evaluation, { key: i, ev, latest: false, orgId: p.orgId })),
          )
        : null,
    ),
  );
}

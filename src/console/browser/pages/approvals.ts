/// <reference lib="dom" />
// #/org/<id>/approvals: activities awaiting consensus that the logged-in user may vote on
// (list_activities' canApprove / canReject are computed for the caller); approve or reject
// with the user's own stamp (ACTIVITY_TYPE_APPROVE_ACTIVITY / REJECT_ACTIVITY, by the
// activity's fingerprint), then the activity's state as the vote left it.
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
  ReadOnlyNote,
  statusLabel,
  typeLabel,
  useLoad,
  type VNode,
} from "../ui.ts";
import { submitterOf } from "./activities.ts";

const PAGE = 100;

function ApprovalRow(props: { p: PageProps; a: Json }): VNode {
  const { p, a } = props;
  const [busy, setBusy] = useState(false);
  const [after, setAfter] = useState<Json | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const vote = async (approve: boolean) => {
    setBusy(true);
    setError(undefined);
    try {
      const type = approve ? "ACTIVITY_TYPE_APPROVE_ACTIVITY" : "ACTIVITY_TYPE_REJECT_ACTIVITY";
      setAfter(await p.api.submit(approve ? "approve_activity" : "reject_activity", type, p.orgId, { fingerprint: a.fingerprint }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return h(
    "tr",
    { "data-testid": "approval-row", "data-activity-id": a.id },
    h(
      "td",
      null,
      h("a", { href: orgHref(p.orgId, `activities/${encodeURIComponent(a.id)}`) }, typeLabel(a.type)),
      h("div", { class: "muted" }, h("code", null, a.id)),
      // What the vote is on: the intent, as signed by the submitter.
      h("details", { class: "intent" }, h("summary", null, "intent"), h(JsonView, { value: a.intent })),
    ),
    h("td", null, submitterOf(a)?.user?.userName ?? ""),
    h("td", null, fmtTime(a.createdAt)),
    h("td", null, `${(a.votes as Json[]).length} vote${(a.votes as Json[]).length === 1 ? "" : "s"}`),
    h(
      "td",
      null,
      h(ErrorBanner, { error }),
      after
        ? h(
            "span",
            { class: "vote-result", "data-testid": "vote-result", "data-status": after.status },
            after.status,
            " ",
            h("span", { class: "muted" }, `(${statusLabel(String(after.status))})`),
          )
        : p.readOnly
          ? null
          : h(
              "div",
              { class: "actions" },
              a.canApprove
                ? h(
                    "button",
                    { type: "button", "data-testid": "approve-button", disabled: busy, onClick: () => void vote(true) },
                    "Approve",
                  )
                : null,
              a.canReject
                ? h(
                    "button",
                    { type: "button", class: "danger", "data-testid": "reject-button", disabled: busy, onClick: () => void vote(false) },
                    "Reject",
                  )
                : null,
            ),
    ),
  );
}

export function ApprovalsPage(p: PageProps): VNode {
  const load = useLoad(
    () =>
      p.api
        .query<{ activities: Json[] }>("list_activities", p.orgId, {
          filterByStatus: ["ACTIVITY_STATUS_CONSENSUS_NEEDED"],
          paginationOptions: { limit: String(PAGE) },
        })
        .then((r) => r.activities.filter((a) => a.canApprove || a.canReject)),
    [p.orgId],
  );
  const rows = load.data ?? [];
  return h(
    "div",
    null,
    h("h1", null, "Approvals"),
    h(ReadOnlyNote, { readOnly: p.readOnly }),
    h("p", { class: "muted" }, "Activities awaiting consensus that you may vote on. Your vote is stamped with your own credential."),
    h(ErrorBanner, { error: load.error }),
    load.loading ? h(Loading, null) : null,
    rows.length > 0
      ? h(
          "table",
          null,
          h(
            "thead",
            null,
            h(
              "tr",
              null,
              ["Activity", "Submitted by", "Created", "Votes", ""].map((c, i) => h("th", { key: i }, c)),
            ),
          ),
          h(
            "tbody",
            null,
            rows.map((a) => h(ApprovalRow, { key: a.id, p, a })),
          ),
        )
      : !load.loading && !load.error
        ? h("p", { class: "muted", "data-testid": "approvals-empty" }, "Nothing awaits your vote.")
        : null,
  );
}

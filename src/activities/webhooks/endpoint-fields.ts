// Fields shared by the webhook endpoint activities.
import { Type } from "@sinclair/typebox";
import { invalid } from "../../errors.ts";
import { Name } from "../../schemas/common.ts";
import { urlProblem, type WebhookUrlPolicy } from "../../webhooks/url-policy.ts";
import { EVENT_ACTIVITY_UPDATES } from "../../store/webhooks.ts";

export const Url = Type.String({ minLength: 1, maxLength: 2048, errorMessage: "url must be a URL of at most 2048 characters" });
export const EndpointName = Name("name");

export const Subscription = Type.Object({
  eventType: Type.String({ minLength: 1, maxLength: 64, errorMessage: "eventType must be ACTIVITY_UPDATES" }),
  filtersJson: Type.Optional(Type.String({ maxLength: 4096, errorMessage: "filtersJson must be at most 4096 characters" })),
  isActive: Type.Optional(Type.Boolean()),
});

/** Checks the URL against the configured policy (AdmitEnv.webhookUrls, docs/webhooks.md §1.2). */
export function checkUrl(url: string | undefined, field: string, policy: WebhookUrlPolicy): void {
  if (url === undefined) return;
  const problem = urlProblem(url, policy);
  if (problem) throw invalid(`invalid webhook url: ${problem}`, [{ field, description: problem }]);
}

export function checkSubscriptions(subs: { eventType: string; filtersJson?: string }[] | undefined): void {
  subs?.forEach((s, i) => {
    const field = `parameters.subscriptions[${i}]`;
    if (s.eventType !== EVENT_ACTIVITY_UPDATES) {
      throw invalid(`event type ${JSON.stringify(s.eventType)} is not supported; this service emits ACTIVITY_UPDATES`, [
        { field: `${field}.eventType`, description: "must be ACTIVITY_UPDATES" },
      ]);
    }
    if (s.filtersJson !== undefined && s.filtersJson !== "") {
      try {
        JSON.parse(s.filtersJson);
      } catch {
        throw invalid("filtersJson must be valid JSON", [{ field: `${field}.filtersJson`, description: "must be valid JSON" }]);
      }
    }
  });
}

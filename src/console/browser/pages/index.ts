/// <reference lib="dom" />
// The console's one route list (docs/console.md §5): hash paths after #/, the navigation entry
// each belongs to, and its page module.
import type { Route } from "../page.ts";
import { ActivitiesPage } from "./activities.ts";
import { ActivityPage } from "./activity.ts";
import { ApprovalsPage } from "./approvals.ts";
import { OverviewPage } from "./overview.ts";
import { PoliciesPage } from "./policies.ts";
import { PolicyEditorPage } from "./policy-editor.ts";
import { SubOrgsPage } from "./suborgs.ts";
import { UserPage, UsersPage } from "./users.ts";
import { WalletsPage } from "./wallets.ts";
import { WebhooksPage } from "./webhooks.ts";

export const ROUTES: readonly Route[] = [
  { pattern: "org/:orgId", nav: "overview", page: OverviewPage },
  { pattern: "org/:orgId/suborgs", nav: "suborgs", page: SubOrgsPage },
  { pattern: "org/:orgId/users", nav: "users", page: UsersPage },
  { pattern: "org/:orgId/users/:userId", nav: "users", page: UserPage },
  { pattern: "org/:orgId/activities", nav: "activities", page: ActivitiesPage },
  { pattern: "org/:orgId/activities/:activityId", nav: "activities", page: ActivityPage },
  { pattern: "org/:orgId/approvals", nav: "approvals", page: ApprovalsPage },
  { pattern: "org/:orgId/policies", nav: "policies", page: PoliciesPage },
  { pattern: "org/:orgId/policies/new", nav: "policies", page: PolicyEditorPage },
  { pattern: "org/:orgId/policies/:policyId", nav: "policies", page: PolicyEditorPage },
  { pattern: "org/:orgId/wallets", nav: "wallets", page: WalletsPage },
  { pattern: "org/:orgId/webhooks", nav: "webhooks", page: WebhooksPage },
];

/** The navigation, in order: data-testid nav-<id>, #/org/<orgId>/<path>. */
export const NAV = [
  { id: "overview", label: "Organization", path: "" },
  { id: "suborgs", label: "Sub-organizations", path: "suborgs" },
  { id: "users", label: "Users", path: "users" },
  { id: "activities", label: "Activities", path: "activities" },
  { id: "approvals", label: "Approvals", path: "approvals" },
  { id: "policies", label: "Policies", path: "policies" },
  { id: "wallets", label: "Wallets", path: "wallets" },
  { id: "webhooks", label: "Webhooks", path: "webhooks" },
] as const;

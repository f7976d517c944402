// The operator console end to end (docs/console.md), in headless Chromium against a real
// `sigil serve`, on both engines, through the console's data-testids only:
//   setup through the official SDK clients (test/helpers/console-org.ts): two root users, a
//   passkey for the first one made in the page by Chromium's virtual authenticator (CDP) at the
//   console's origin and registered with create_authenticators, a non-root user whose activities
//   a policy refuses or holds for a vote, a sub-organization with its own user;
//   passkey login; a user found by search; a refused activity's explanation (the false condition
//   in words, the policy text highlighted); the policy editor (an error at its line and column,
//   fixed, dry-run listing exactly the past activities whose outcome would change, saved and seen
//   by the SDK); the second root user approves the pending activity from the approvals page (API
//   key login) and the SDK sees it completed; the sub-organization's user sees only their
//   organization; logout leaves no session key and survives a reload.
// Every request to a host other than the console's is aborted and listed, and the page's
// Content-Security-Policy refusals are collected: both must stay empty.
// SIGIL_WRITE_SCREENSHOTS=1 rewrites docs/img/console-*.png (SQLite run only).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import type { Browser, BrowserContext, CDPSession, Page } from "playwright-core";
import { engines } from "../helpers/server.ts";
import { addVirtualAuthenticator, browserMissing, launchChromium } from "../helpers/browser.ts";
import {
  NAMES,
  ORG_NAME,
  SUB_ORG_NAME,
  TAG_CONDITION,
  createPasskeyInPage,
  seedConsoleOrg,
  startConsoleServer,
  type ConsoleOrg,
  type ConsoleServer,
} from "../helpers/console-org.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const IMG = path.join(ROOT, "docs/img");
/** docs/img's screenshots are rewritten only on request (SIGIL_WRITE_SCREENSHOTS=1). */
const WRITE_SCREENSHOTS = process.env.SIGIL_WRITE_SCREENSHOTS === "1";
/** One wait for any DOM state the console should reach (the editor's checks are debounced). */
const WAIT_MS = 20_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const tid = (id: string, attrs: Record<string, string> = {}) =>
  `[data-testid="${id}"]${Object.entries(attrs)
    .map(([k, v]) => `[${k}="${v}"]`)
    .join("")}`;

/** The editor's draft: a typo on line 2 (`=` for `==`) at column 19, then fixed. */
const DRAFT_BROKEN = "activity.kind == 'CREATE_USERS' &&\n  activity.action = 'CREATE'";
const DRAFT_FIXED = "activity.kind == 'CREATE_USERS' &&\n  activity.action == 'CREATE'";
const DRAFT_NAME = "Carol adds users";

interface Tab {
  context: BrowserContext;
  page: Page;
}

const skip = browserMissing();
let browser: Browser | undefined;

// One describe around all: grouped with other files in a process (test/e2e/group.ts), the hooks stay this file's.
describe("the console in Chromium", { skip }, () => {
  before(async () => {
    if (!skip) browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  for (const spec of engines()) {
    describe(`the console in Chromium [${spec.name}]`, { skip: spec.skip ?? skip }, () => {
      let cs: ConsoleServer;
      let org: ConsoleOrg;
      let alice: Tab;
      let aliceCdp: CDPSession;
      let authenticatorId: string;
      let bob: Tab;
      let dora: Tab;
      /** Requests to any other origin (aborted). */
      const external = new Set<string>();
      /** Content-Security-Policy refusals: securitypolicyviolation events and console reports. */
      const cspRefused: string[] = [];
      const pageErrors: string[] = [];

      const console_ = (hash: string) => `${cs.origin}/console/#${hash}`;

      /** A browser context of its own (storage, session) for one user, watched for other hosts and CSP refusals. */
      async function openTab(): Promise<Tab> {
        const context = await browser!.newContext({ viewport: { width: 1280, height: 860 } });
        await context.route("**/*", (route) => {
          const url = route.request().url();
          if (new URL(url).origin === cs.origin) return route.continue();
          external.add(url);
          return route.abort();
        });
        await context.exposeBinding("__cspViolation", (_src, text: string) => void cspRefused.push(text));
        await context.addInitScript(() => {
          document.addEventListener("securitypolicyviolation", (e) =>
            (window as unknown as { __cspViolation(t: string): void }).__cspViolation(`${e.violatedDirective} ${e.blockedURI}`),
          );
        });
        const page = await context.newPage();
        page.on("console", (msg) => {
          if (/Content[- ]Security[- ]Policy/i.test(msg.text())) cspRefused.push(msg.text());
        });
        page.on("pageerror", (err) => pageErrors.push(err.message));
        return { context, page };
      }

      const shot = async (page: Page, name: string) => {
        if (!WRITE_SCREENSHOTS || spec.name !== "sqlite") return;
        await page.waitForLoadState("networkidle");
        await page.mouse.move(0, 0); // no hover underline on the link last clicked
        await page.screenshot({ path: path.join(IMG, `console-${name}.png`), fullPage: true });
      };

      const texts = (page: Page, selector: string) => page.locator(selector).allTextContents();
      const attrs = (page: Page, selector: string, name: string) =>
        page.locator(selector).evaluateAll((els, n) => els.map((e) => e.getAttribute(n) ?? ""), name);
      /** Waits until `fn` (run in the page) is truthy. */
      const until = <A>(page: Page, fn: (arg: A) => unknown, arg: A, what: string) =>
        page.waitForFunction(fn as (arg: unknown) => unknown, arg as unknown, { timeout: WAIT_MS }).catch((err: Error) => {
          throw new Error(`${what}: ${err.message}\npage errors: ${pageErrors.join("; ") || "none"}`);
        });
      const visible = (page: Page, selector: string) =>
        page.waitForSelector(selector, { state: "visible", timeout: WAIT_MS }).catch(async (err: Error) => {
          const banners = await texts(page, tid("error-banner")).catch(() => []);
          throw new Error(
            `${err.message}\nerror banners: ${banners.join("; ") || "none"}\npage errors: ${pageErrors.join("; ") || "none"}`,
          );
        });

      async function loginWithApiKey(tab: Tab, organizationId: string, key: { publicKey: string; privateKey: string }) {
        await tab.page.goto(console_("/login"));
        await tab.page.fill(tid("login-org-id"), organizationId);
        await tab.page.fill(tid("login-api-public"), key.publicKey);
        await tab.page.fill(tid("login-api-private"), key.privateKey);
        await tab.page.click(tid("login-api-key"));
        await visible(tab.page, tid("whoami"));
      }

      /** Records in every object store of every IndexedDB database of the page's origin. */
      const indexedDbRecords = (page: Page) =>
        page.evaluate(async () => {
          let n = 0;
          for (const info of await indexedDB.databases()) {
            if (!info.name) continue;
            const db = await new Promise<IDBDatabase>((resolve, reject) => {
              const req = indexedDB.open(info.name!);
              req.onsuccess = () => resolve(req.result);
              req.onerror = () => reject(req.error ?? new Error("indexedDB request failed"));
            });
            for (const store of Array.from(db.objectStoreNames)) {
              n += await new Promise<number>((resolve, reject) => {
                const req = db.transaction(store, "readonly").objectStore(store).count();
                req.onsuccess = () => resolve(req.result);
                req.onerror = () => reject(req.error ?? new Error("indexedDB request failed"));
              });
            }
            db.close();
          }
          return n;
        });

      before(async () => {
        cs = await startConsoleServer(spec.name);
      });
      after(async () => {
        for (const t of [alice, bob, dora]) await t?.context.close();
        await cs?.stop();
      });

      it("setup: a passkey made at the console's origin is registered for the first root user, the organization seeded through the SDK", async () => {
        alice = await openTab();
        aliceCdp = await alice.context.newCDPSession(alice.page);
        authenticatorId = await addVirtualAuthenticator(aliceCdp);
        const res = await alice.page.goto(console_("/login"));
        assert.equal(res?.status(), 200, "the console is served at /console/");
        const csp = res!.headers()["content-security-policy"] ?? "";
        assert.match(csp, /script-src 'self'(;|$)/, `the console's Content-Security-Policy: ${csp}`);
        assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);

        await visible(alice.page, tid("login-org-id"));
        await shot(alice.page, "login");
        const passkey = await createPasskeyInPage(alice.page, NAMES.alice);
        org = await seedConsoleOrg(cs);
        const reg = await org.alice.sdk.createAuthenticators({
          userId: org.alice.userId,
          authenticators: [
            { authenticatorName: "Chromium virtual authenticator", challenge: passkey.encodedChallenge, attestation: passkey.attestation },
          ],
        });
        assert.equal(reg.activity.status, "ACTIVITY_STATUS_COMPLETED");
        const { user } = await org.alice.sdk.getUser({ userId: org.alice.userId });
        assert.deepEqual(
          user.authenticators.map((a) => a.credentialId),
          [passkey.attestation.credentialId],
        );
      });

      it("logs in with the passkey: whoami shows the first root user", async () => {
        const { page } = alice;
        await page.fill(tid("login-org-id"), org.organizationId);
        await page.click(tid("login-passkey"));
        await visible(page, tid("whoami"));
        const who = (await page.textContent(tid("whoami"))) ?? "";
        assert.ok(who.includes(NAMES.alice) && who.includes(org.organizationId), `whoami: ${who}`);
        const { credentials } = await aliceCdp.send("WebAuthn.getCredentials", { authenticatorId });
        assert.equal(credentials.length, 1);
        assert.ok(credentials[0]!.signCount >= 1, "the virtual authenticator signed the login");
        await until(page, (id) => location.hash === `#/org/${id}`, org.organizationId, "the overview's URL");
        await shot(page, "overview");
      });

      it("finds a user with the search box", async () => {
        const { page } = alice;
        await page.click(tid("nav-users"));
        await until(page, (id) => location.hash === `#/org/${id}/users`, org.organizationId, "the users page's URL");
        await visible(page, tid("user-row", { "data-user-id": org.carol.userId }));
        assert.deepEqual(
          new Set(await attrs(page, tid("user-row"), "data-user-id")),
          new Set([org.alice.userId, org.bob.userId, org.carol.userId]),
        );
        await shot(page, "users");
        await page.fill(tid("user-search"), "Carol");
        await until(
          page,
          (id) => {
            const rows = document.querySelectorAll('[data-testid="user-row"]');
            return rows.length === 1 && rows[0]!.getAttribute("data-user-id") === id;
          },
          org.carol.userId,
          "only Carol's row after the search",
        );
        assert.ok((await texts(page, tid("user-row")))[0]!.includes(NAMES.carol));
      });

      it("opens the refused activity: the explanation names the false condition and the policy text is highlighted", async () => {
        const { page } = alice;
        await page.click(tid("nav-activities"));
        await visible(page, tid("activity-row"));
        await page.selectOption(tid("activity-filter-status"), "ACTIVITY_STATUS_FAILED");
        await until(
          page,
          (ids) => {
            const rows = Array.from(document.querySelectorAll('[data-testid="activity-row"]'));
            const shown = rows.map((r) => r.getAttribute("data-activity-id")).sort();
            return (
              rows.every((r) => r.getAttribute("data-status") === "ACTIVITY_STATUS_FAILED") && JSON.stringify(shown) === JSON.stringify(ids)
            );
          },
          [org.refusedUsersId, org.refusedPolicyId].sort(),
          "the FAILED filter lists exactly Carol's two refused activities",
        );
        const row = page.locator(tid("activity-row", { "data-activity-id": org.refusedUsersId }));
        const link = row.locator("a");
        await ((await link.count()) > 0 ? link.first() : row).click();
        await until(page, (h) => location.hash === h, `#/org/${org.organizationId}/activities/${org.refusedUsersId}`, "the activity's URL");
        await visible(page, tid("explanation"));
        assert.match((await page.textContent(tid("activity-status"))) ?? "", /ACTIVITY_STATUS_FAILED/);
        assert.deepEqual(await attrs(page, tid("evaluation"), "data-outcome"), ["OUTCOME_DENY_IMPLICIT"]);
        assert.deepEqual(await attrs(page, tid("policy-outcome", { "data-policy-id": org.tagPolicyId }), "data-outcome"), [
          "OUTCOME_DENY_IMPLICIT",
        ]);
        const words = (await texts(page, tid("explanation"))).join("\n");
        for (const part of ["activity.type", "ACTIVITY_TYPE_CREATE_USERS_V4", "ACTIVITY_TYPE_CREATE_USER_TAG"]) {
          assert.ok(words.includes(part), `the explanation names ${part}: ${words}`);
        }
        const marks = await page
          .locator(tid("policy-highlight"))
          .evaluateAll((els) => els.map((e) => ({ tag: e.tagName, text: e.textContent ?? "" })));
        assert.ok(marks.length >= 1, "the false part is highlighted");
        for (const m of marks) {
          assert.equal(m.tag, "MARK");
          assert.ok(
            m.text.length > 0 && TAG_CONDITION.includes(m.text),
            `highlight ${JSON.stringify(m.text)} is part of the policy's condition`,
          );
        }
        assert.ok(
          marks.some((m) => m.text.includes("ACTIVITY_TYPE_CREATE_USER_TAG")),
          `the compared type is highlighted: ${JSON.stringify(marks)}`,
        );
        await shot(page, "activity");
      });

      it("policy editor: the error at its line and column, fixed, dry-run lists exactly the activities that would change, saved", async () => {
        const { page } = alice;
        const consensus = `approvers.any(user, user.id == '${org.carol.userId}')`;
        await page.goto(console_(`/org/${org.organizationId}/policies/new`));
        await visible(page, tid("policy-condition"));
        await page.fill(tid("policy-name"), DRAFT_NAME);
        await page.selectOption(tid("policy-effect"), "EFFECT_ALLOW");
        await page.fill(tid("policy-consensus"), consensus);
        await page.fill(tid("policy-condition"), DRAFT_BROKEN);
        await visible(page, tid("policy-error", { "data-field": "condition" }));
        const errors = await page
          .locator(tid("policy-error"))
          .evaluateAll((els) => els.map((e) => [e.getAttribute("data-field"), e.getAttribute("data-line"), e.getAttribute("data-column")]));
        assert.deepEqual(errors, [["condition", "2", "19"]]);
        assert.equal(await page.locator(tid("policy-valid")).isVisible(), false);
        await shot(page, "policy-error");

        await page.fill(tid("policy-condition"), DRAFT_FIXED);
        await visible(page, tid("policy-valid"));
        assert.equal(await page.locator(tid("policy-error")).count(), 0);

        await page.click(tid("dry-run-button"));
        await visible(page, tid("dry-run-result"));
        const { activities } = await org.alice.sdk.getActivities({
          organizationId: org.organizationId,
          paginationOptions: { limit: "100" },
        });
        const result = page.locator(tid("dry-run-result"));
        const replayed = Number(await result.getAttribute("data-replayed"));
        assert.ok(replayed >= 5 && replayed <= activities.length, `replayed ${replayed} of the ${activities.length} recorded`);
        assert.equal(await result.getAttribute("data-changed"), "1");
        const changed = await page
          .locator(tid("dry-run-changed-row"))
          .evaluateAll((els) =>
            els.map((e) => [e.getAttribute("data-activity-id"), e.getAttribute("data-before"), e.getAttribute("data-after")]),
          );
        // Carol's refused create_users would be allowed; her refused create_policy, the pending tag and
        // every root user's activity stay as they are.
        assert.deepEqual(changed, [[org.refusedUsersId, "OUTCOME_DENY_IMPLICIT", "OUTCOME_ALLOW"]]);
        await shot(page, "dry-run");

        await page.click(tid("policy-save"));
        await visible(page, tid("saved-policy-id"));
        const policyId = ((await page.textContent(tid("saved-policy-id"))) ?? "").trim();
        assert.match(policyId, UUID);
        const { policy } = await org.alice.sdk.getPolicy({ policyId });
        assert.deepEqual(
          [policy.policyName, policy.effect, policy.condition, policy.consensus],
          [DRAFT_NAME, "EFFECT_ALLOW", DRAFT_FIXED, consensus],
        );
        await page.click(tid("nav-policies"));
        await visible(page, tid("policy-row", { "data-policy-id": policyId }));
        assert.deepEqual(new Set(await attrs(page, tid("policy-row"), "data-policy-id")), new Set([org.tagPolicyId, policyId]));
        // What the dry-run said, the engine now does: Carol's create_users is allowed.
        const again = await org.carol.sdk.createUsers({
          users: [{ userName: "Mallory Mistake", apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
        });
        assert.equal(again.activity.status, "ACTIVITY_STATUS_COMPLETED");
      });

      it("the other pages list what the SDK made: sub-organizations, policies, wallets, webhook endpoints", async () => {
        const { page } = alice;
        const wallet = await org.alice.sdk.createWallet({
          walletName: "Treasury",
          accounts: [
            {
              curve: "CURVE_SECP256K1",
              pathFormat: "PATH_FORMAT_BIP32",
              path: "m/44'/60'/0'/0/0",
              addressFormat: "ADDRESS_FORMAT_ETHEREUM",
            },
          ],
        });
        const endpoint = await org.alice.sdk.createWebhookEndpoint({
          url: "https://hooks.example.com/sigil",
          name: "treasury events",
          subscriptions: [{ eventType: "ACTIVITY_UPDATES" }],
        });
        const pages: [string, string, Record<string, string>][] = [
          ["suborgs", "suborg-row", { "data-organization-id": org.subOrganizationId }],
          ["policies", "nav-policies", {}],
          ["wallets", "wallet-row", { "data-wallet-id": wallet.walletId }],
          ["webhooks", "webhook-row", { "data-endpoint-id": endpoint.endpointId }],
        ];
        for (const [name, row, attributes] of pages) {
          await page.click(tid(`nav-${name}`));
          await until(
            page,
            ([id, n]) => location.hash.startsWith(`#/org/${id}/${n}`),
            [org.organizationId, name] as const,
            `the ${name} page's URL`,
          );
          await visible(page, tid(row, attributes));
          await shot(page, name);
        }
        assert.deepEqual(pageErrors, []);
      });

      it("the second root user approves the pending activity from the approvals page; the SDK sees it completed", async () => {
        bob = await openTab();
        const { page } = bob;
        await loginWithApiKey(bob, org.organizationId, org.bob.key);
        const who = (await page.textContent(tid("whoami"))) ?? "";
        assert.ok(who.includes(NAMES.bob) && who.includes(org.organizationId), `whoami: ${who}`);
        await page.click(tid("nav-approvals"));
        const row = page.locator(tid("approval-row", { "data-activity-id": org.pendingId }));
        await row.waitFor({ state: "visible", timeout: WAIT_MS });
        assert.deepEqual(await attrs(page, tid("approval-row"), "data-activity-id"), [org.pendingId]);
        await shot(page, "approvals");
        await row.locator(tid("approve-button")).click();
        await until(
          page,
          () => /ACTIVITY_STATUS_COMPLETED/.test(document.querySelector('[data-testid="vote-result"]')?.textContent ?? ""),
          undefined,
          "vote-result shows COMPLETED",
        );
        const { activity } = await org.alice.sdk.getActivity({ activityId: org.pendingId });
        assert.equal(activity.status, "ACTIVITY_STATUS_COMPLETED");
        assert.deepEqual(
          activity.votes.map((v) => [v.userId, v.selection]),
          [
            [org.carol.userId, "VOTE_SELECTION_APPROVED"],
            [org.bob.userId, "VOTE_SELECTION_APPROVED"],
          ],
        );
        const { userTags } = await org.alice.sdk.listUserTags({});
        assert.ok(
          userTags.some((t) => t.tagName === org.pendingTagName),
          "the tag Carol asked for exists",
        );
      });

      it("the sub-organization's user sees only their organization", async () => {
        dora = await openTab();
        const { page } = dora;
        await loginWithApiKey(dora, org.subOrganizationId, org.dora.key);
        const who = (await page.textContent(tid("whoami"))) ?? "";
        assert.ok(who.includes(NAMES.dora) && who.includes(org.subOrganizationId), `whoami: ${who}`);
        await until(page, (name) => document.body.innerText.includes(name), SUB_ORG_NAME, "the overview names the sub-organization");
        await shot(page, "sub-org");
        await page.click(tid("nav-users"));
        await visible(page, tid("user-row"));
        assert.deepEqual(await attrs(page, tid("user-row"), "data-user-id"), [org.dora.userId]);

        const parentData = [
          ORG_NAME,
          NAMES.alice,
          NAMES.bob,
          NAMES.carol,
          org.alice.userId,
          org.bob.userId,
          org.carol.userId,
          org.tagPolicyId,
          org.refusedUsersId,
          org.pendingId,
        ];
        for (const hash of [
          `/org/${org.organizationId}`,
          `/org/${org.organizationId}/users`,
          `/org/${org.organizationId}/activities/${org.refusedUsersId}`,
          `/org/${org.organizationId}/policies`,
        ]) {
          await page.goto(console_(hash));
          await visible(page, tid("error-banner"));
          const html = await page.content();
          const leaked = parentData.filter((d) => html.includes(d));
          assert.deepEqual(leaked, [], `#${hash} shows the parent's data`);
          assert.equal(await page.locator(`${tid("user-row")}, ${tid("activity-row")}, ${tid("explanation")}`).count(), 0);
        }
      });

      it("logs out: back to login, no session key left, a reload stays logged out", async () => {
        const { page } = alice;
        await page.goto(console_(`/org/${org.organizationId}`));
        await visible(page, tid("whoami"));
        assert.ok((await indexedDbRecords(page)) > 0, "the passkey login keeps its session key in IndexedDB");
        await page.click(tid("logout"));
        await visible(page, tid("login-org-id"));
        assert.match(await page.evaluate(() => location.hash), /^#\/login(\?org=[0-9a-f-]+)?$/);
        assert.equal(await indexedDbRecords(page), 0);
        assert.equal(await page.evaluate(() => sessionStorage.length), 0);
        await page.reload();
        await visible(page, tid("login-org-id"));
        assert.equal(await page.locator(tid("whoami")).count(), 0);
        // A shared URL of the organization does not bring the session back either.
        await page.goto(console_(`/org/${org.organizationId}/users`));
        await visible(page, tid("login-org-id"));
        assert.equal(await page.locator(`${tid("whoami")}, ${tid("user-row")}`).count(), 0);

        await bob.page.click(tid("logout"));
        await visible(bob.page, tid("login-org-id"));
        assert.equal(await bob.page.evaluate(() => sessionStorage.length), 0);
        assert.equal(await indexedDbRecords(bob.page), 0);
      });

      it("no request left the console's origin and the Content-Security-Policy refused nothing", () => {
        assert.deepEqual([...external], []);
        assert.deepEqual(cspRefused, []);
        assert.deepEqual(pageErrors, []);
      });
    });
  }
});

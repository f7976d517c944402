// The operator console's shell (docs/console.md): `sigil serve` serves it at /console with its
// headers (the strict Content-Security-Policy on every answer, 404s and redirects included;
// SIGIL_CONSOLE=off: not served), and in headless Chromium the page loads under that policy with
// no console error, no CSP refusal and no request to another host; a pasted API key logs in
// (whoami shows the user and organization), a page reads the API with it, and log out forgets
// the key (sessionStorage empty, a reload stays logged out); an activity awaiting consensus is
// approved from its own page. SQLite: nothing here depends on
// the engine (test/e2e/console.test.ts runs the whole console on both).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { browserMissing, launchChromium } from "../helpers/browser.ts";
import { member } from "../helpers/console-org.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const tid = (id: string) => `[data-testid="${id}"]`;
const WAIT = { timeout: 20_000 };

async function get(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { headers, redirect: "manual" });
}

function assertConsoleHeaders(res: Response, what: string): void {
  assert.equal(res.headers.get("content-security-policy"), CSP, what);
  assert.equal(res.headers.get("x-content-type-options"), "nosniff", what);
  assert.equal(res.headers.get("referrer-policy"), "no-referrer", what);
  assert.equal(res.headers.get("cache-control"), "no-cache", what);
}

const skip = browserMissing();

describe("the console's shell [sqlite]", { timeout: 180_000 }, () => {
  let inst: Instance;
  let root: InitResult;
  let server: RunningServer;
  let browser: Browser | undefined;

  before(async () => {
    inst = await newInstance("sqlite");
    root = await sigilInit(inst, ["--name", "Console Org"]);
    server = await startServer(inst);
    if (!skip) browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await inst?.cleanup();
  });

  it("serves /console/ and its files with the console's headers; /console redirects; unknown files are 404 with the same headers", async () => {
    const redirect = await get(`${server.url}/console`);
    assert.equal(redirect.status, 308);
    assert.equal(redirect.headers.get("location"), "/console/");
    assertConsoleHeaders(redirect, "redirect");

    const page = await get(`${server.url}/console/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
    assertConsoleHeaders(page, "index");
    const html = await page.text();
    assert.match(html, /<script src="console\.js" defer><\/script>/);
    assert.doesNotMatch(html, /<script>|<style|style="/, "no inline script or style");

    for (const [file, type] of [
      ["console.js", /^text\/javascript/],
      ["console.css", /^text\/css/],
    ] as const) {
      const res = await get(`${server.url}/console/${file}`);
      assert.equal(res.status, 200, file);
      assert.match(res.headers.get("content-type") ?? "", type, file);
      assertConsoleHeaders(res, file);
      const etag = res.headers.get("etag");
      assert.ok(etag, `${file} has an ETag`);
      const again = await get(`${server.url}/console/${file}`, { "if-none-match": etag });
      assert.equal(again.status, 304, `${file} revalidates`);
    }
    for (const missing of ["/console/nope.js", "/console/console.js.map", "/console/index.html", "/console/a/b.js"]) {
      const res = await get(`${server.url}${missing}`);
      assert.equal(res.status, 404, missing);
      assertConsoleHeaders(res, missing);
    }
    // The API's own routes are not touched: no console header on them.
    const health = await get(`${server.url}/healthz`);
    assert.equal(health.headers.get("content-security-policy"), null);
  });

  it(
    "in Chromium: loads under its CSP with no error and no other host, logs in with an API key, shows whoami, reads users, logs out",
    { skip },
    async () => {
      const context = await browser!.newContext();
      const origin = new URL(server.url).origin;
      const elsewhere: string[] = [];
      const problems: string[] = [];
      await context.route("**/*", (route) => {
        const url = route.request().url();
        if (new URL(url).origin === origin) return route.continue();
        elsewhere.push(url);
        return route.abort();
      });
      const page: Page = await context.newPage();
      page.on("console", (m) => {
        // The browser logs an API refusal (the 404 provoked below) as a failed load: that one is the page's banner, not an error.
        const apiRefusal = /status of 4\d\d/.test(m.text()) && new URL(m.location().url || origin).pathname.startsWith("/public/v1/query/");
        if ((m.type() === "error" && !apiRefusal) || /Content[- ]Security[- ]Policy/i.test(m.text()))
          problems.push(`console ${m.type()}: ${m.text()} (${m.location().url})`);
      });
      page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
      try {
        await page.goto(`${server.url}/console/`);
        await page.waitForSelector(tid("login-org-id"), WAIT);
        assert.equal(await page.evaluate(() => location.hash), "#/login");

        // A wrong private key is refused in the page, shown in the banner, nothing sent.
        await page.fill(tid("login-org-id"), root.organizationId);
        await page.fill(tid("login-api-public"), root.apiPublicKey);
        await page.fill(tid("login-api-private"), "11".repeat(32));
        await page.click(tid("login-api-key"));
        await page.waitForSelector(tid("error-banner"), WAIT);
        assert.match((await page.textContent(tid("error-banner"))) ?? "", /does not belong/);

        await page.fill(tid("login-api-private"), root.apiPrivateKey);
        await page.click(tid("login-api-key"));
        await page.waitForSelector(tid("whoami"), WAIT);
        const who = (await page.textContent(tid("whoami"))) ?? "";
        assert.ok(who.includes(root.organizationId), who);
        assert.ok(who.includes("Console Org"), who);
        assert.equal(await page.getAttribute(tid("whoami"), "data-user-id"), root.userId);
        assert.equal(await page.evaluate(() => location.hash), `#/org/${root.organizationId}`);
        await page.waitForSelector(tid("org-name"), WAIT);
        assert.equal(await page.textContent(tid("org-name")), "Console Org");

        await page.click(tid("nav-users"));
        await page.waitForSelector(`${tid("user-row")}[data-user-id="${root.userId}"]`, WAIT);

        // An API error shows in the banner: an activity that does not exist.
        await page.goto(`${server.url}/console/#/org/${root.organizationId}/activities/00000000-0000-4000-8000-000000000000`);
        await page.waitForSelector(tid("error-banner"), WAIT);
        assert.ok(await page.isVisible(tid("whoami")), "the shell stays");

        // Only the organization id is left behind after log out.
        assert.ok(await page.evaluate(() => sessionStorage.length > 0), "the pasted key is kept for the tab");
        await page.click(tid("logout"));
        await page.waitForSelector(tid("login-org-id"), WAIT);
        assert.equal(await page.evaluate(() => location.hash), "#/login");
        assert.equal(await page.evaluate(() => sessionStorage.length), 0);
        assert.deepEqual(await page.evaluate(() => Object.keys(localStorage)), ["sigil-console.organization-id"]);
        assert.equal(await page.inputValue(tid("login-org-id")), root.organizationId, "prefilled from the last use");
        await page.reload();
        await page.waitForSelector(tid("login-org-id"), WAIT);
        assert.equal(await page.locator(tid("whoami")).count(), 0);

        assert.deepEqual(elsewhere, [], "no request to another host");
        assert.deepEqual(problems, [], "no console error, no CSP refusal");
      } finally {
        await context.close();
      }
    },
  );

  it(
    "in Chromium: an activity awaiting consensus is approved from its own page with the user's stamp, and completes",
    { skip },
    async () => {
      const root_ = member(server.url, { publicKey: root.apiPublicKey, privateKey: root.apiPrivateKey }, root.userId, root.organizationId);
      const niaKey = generateP256KeyPair();
      const users = await root_.sdk.createUsers({
        users: [
          {
            userName: "Nia Northcote",
            apiKeys: [{ apiKeyName: "nia", publicKey: niaKey.publicKey, curveType: "API_KEY_CURVE_P256" }],
            authenticators: [],
            oauthProviders: [],
            userTags: [],
          },
        ],
      });
      const nia = member(server.url, niaKey, users.userIds[0]!, root.organizationId);
      await root_.sdk.createPolicy({
        policyName: "Tags need root",
        effect: "EFFECT_ALLOW",
        condition: "activity.type == 'ACTIVITY_TYPE_CREATE_USER_TAG'",
        consensus: `approvers.any(user, user.id == '${root.userId}')`,
        notes: "",
      });
      const pending = await nia.http.createUserTag({
        type: "ACTIVITY_TYPE_CREATE_USER_TAG",
        timestampMs: String(Date.now()),
        organizationId: root.organizationId,
        parameters: { userTagName: "console-shell", userIds: [] },
      });
      assert.equal(pending.activity.status, "ACTIVITY_STATUS_CONSENSUS_NEEDED");

      const context = await browser!.newContext();
      const page = await context.newPage();
      try {
        await page.goto(`${server.url}/console/#/login`);
        await page.fill(tid("login-org-id"), root.organizationId);
        await page.fill(tid("login-api-public"), root.apiPublicKey);
        await page.fill(tid("login-api-private"), root.apiPrivateKey);
        await page.click(tid("login-api-key"));
        await page.waitForSelector(tid("whoami"), WAIT);
        await page.goto(`${server.url}/console/#/org/${root.organizationId}/activities/${pending.activity.id}`);
        await page.waitForSelector(`${tid("activity-status")}[data-status="ACTIVITY_STATUS_CONSENSUS_NEEDED"]`, WAIT);
        await page.click(tid("activity-approve"));
        await page.waitForSelector(`${tid("activity-status")}[data-status="ACTIVITY_STATUS_COMPLETED"]`, WAIT);
        assert.equal(await page.locator(tid("activity-approve")).count(), 0, "no second vote offered");
        const votes = await page
          .locator(tid("vote-row"))
          .evaluateAll((els) => els.map((e) => [e.getAttribute("data-user-id"), e.getAttribute("data-selection")]));
        assert.deepEqual(
          votes.sort(),
          [
            [nia.userId, "VOTE_SELECTION_APPROVED"],
            [root.userId, "VOTE_SELECTION_APPROVED"],
          ].sort(),
        );
        const after = await root_.sdk.getActivity({ activityId: pending.activity.id });
        assert.equal(after.activity.status, "ACTIVITY_STATUS_COMPLETED");
      } finally {
        await context.close();
      }
    },
  );

  it("SIGIL_CONSOLE=off: /console is not served", async () => {
    const off = await startServer(inst, [], { env: { SIGIL_CONSOLE: "off" } });
    try {
      assert.equal((await get(`${off.url}/console/`)).status, 404);
      assert.equal((await get(`${off.url}/console/console.js`)).status, 404);
    } finally {
      await off.stop();
    }
  });
});

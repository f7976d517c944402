// The ranking of a public key's registrations below the target (docs/login-lookups.md §3):
// trusted > proved > sole (the key is its organization's only way in; newest) > one fresh unproved; two fresh ones are refused; stale unproved ones never count.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { chooseRegistration, rankOf, type KeyRegistration } from "../../src/auth/key-registrations.ts";

const NOW = 1_000_000_000;
const WINDOW = 600_000;
const reg = (id: string, agoMs: number, o: { trusted?: boolean; provedAgoMs?: number; sole?: boolean } = {}): KeyRegistration => ({
  id,
  registered_at: NOW - agoMs,
  trusted: o.trusted ? 1 : 0,
  proved_at: o.provedAgoMs === undefined ? null : NOW - o.provedAgoMs,
  ...(o.sole ? { sole: true } : {}),
});
const chosen = (rows: KeyRegistration[], freshMs = WINDOW) => {
  const c = chooseRegistration(rows, NOW, freshMs);
  return c.kind === "one" ? c.registration.id : c.kind;
};

describe("key registrations below the target", () => {
  it("ranks each registration by who vouched for it, then by whether its key was used, then by age", () => {
    assert.equal(rankOf(reg("a", 10 * WINDOW, { trusted: true }), NOW, WINDOW), "trusted");
    assert.equal(rankOf(reg("a", 10 * WINDOW, { trusted: true, provedAgoMs: 1 }), NOW, WINDOW), "trusted");
    assert.equal(rankOf(reg("a", 10 * WINDOW, { provedAgoMs: 1 }), NOW, WINDOW), "proved");
    assert.equal(rankOf(reg("a", WINDOW - 1), NOW, WINDOW), "fresh");
    assert.equal(rankOf(reg("a", WINDOW), NOW, WINDOW), "ineligible");
    // bigint columns may arrive as strings (PostgreSQL).
    assert.equal(rankOf({ id: "a", registered_at: String(NOW - 5), trusted: 0, proved_at: null }, NOW, WINDOW), "fresh");
    assert.equal(rankOf({ id: "a", registered_at: String(NOW - 5 * WINDOW), trusted: 0, proved_at: String(NOW) }, NOW, WINDOW), "proved");
  });

  it("a stranger's early, unproved registration never wins: the owner's fresh sign-up does", () => {
    assert.equal(chosen([reg("stranger", 2 * WINDOW), reg("owner", 1_000)]), "owner");
  });

  it("the backend's registration beats a tenant's copy, older or newer, proved or fresh", () => {
    assert.equal(
      chosen([reg("copy-before", 5 * WINDOW, { provedAgoMs: 1 }), reg("backend", WINDOW * 2, { trusted: true }), reg("copy-after", 10)]),
      "backend",
    );
  });

  it("a proved registration beats fresh ones; among trusted or proved ones the oldest wins (id breaks ties)", () => {
    assert.equal(chosen([reg("fresh", 10), reg("proved", 3 * WINDOW, { provedAgoMs: 5 })]), "proved");
    assert.equal(chosen([reg("p2", 2 * WINDOW, { provedAgoMs: 5 }), reg("p1", 3 * WINDOW, { provedAgoMs: 1 })]), "p1");
    assert.equal(chosen([reg("t-b", WINDOW, { trusted: true }), reg("t-a", WINDOW, { trusted: true })]), "t-a");
  });

  it("two fresh unproved registrations and nothing better: refused, never guessed", () => {
    assert.equal(chosen([reg("a", 10), reg("b", 20)]), "ambiguous");
    assert.equal(chosen([reg("a", 10), reg("b", 20), reg("stale", 2 * WINDOW)]), "ambiguous");
  });

  it("a registration that is its organization's only way in ranks after proved ones and before fresh ones, at any age; the newest wins", () => {
    assert.equal(rankOf(reg("a", 100 * WINDOW, { sole: true }), NOW, WINDOW), "sole");
    assert.equal(rankOf(reg("a", 1, { sole: true, provedAgoMs: 1 }), NOW, WINDOW), "proved");
    // A stranger's fresh copy in an organization of its own (another key there) loses to the owner's sign-up.
    assert.equal(chosen([reg("stranger", 10), reg("owner", 5, { sole: true })]), "owner");
    // Any number of sole ones: only the key's holder can act in any of them; the latest sign-up is core's.
    assert.equal(chosen([reg("old-sole", 5 * WINDOW, { sole: true }), reg("new-sole", 10, { sole: true }), reg("fresh", 1)]), "new-sole");
    assert.equal(chosen([reg("sole", 10, { sole: true }), reg("proved", 3 * WINDOW, { provedAgoMs: 5 })]), "proved");
    assert.equal(chosen([reg("sole", 10, { sole: true }), reg("backend", 3 * WINDOW, { trusted: true })]), "backend");
  });

  it("only stale unproved registrations, or a window of 0: none", () => {
    assert.equal(chosen([reg("a", 2 * WINDOW), reg("b", 3 * WINDOW)]), "none");
    assert.equal(chosen([reg("a", 0)], 0), "none");
    assert.equal(chosen([]), "none");
  });
});

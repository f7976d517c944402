// Which failures mean "the database is away" (503, retry) and which are bugs (500, logged).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isStoreUnavailable, StoreUnavailableError } from "../../src/store/db.ts";
import { toApiError } from "../../src/server/error-handler.ts";

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe("database unavailability", () => {
  it("recognizes outages: terminated, refused, timed out, locked", () => {
    const outages = [
      withCode("terminating connection due to administrator command", "57P01"),
      withCode("canceling statement due to statement timeout", "57014"),
      withCode("terminating connection due to idle-in-transaction timeout", "25P03"),
      withCode("the database system is starting up", "57P03"),
      withCode("connection failure", "08006"),
      withCode("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"),
      withCode("read ECONNRESET", "ECONNRESET"),
      new AggregateError([withCode("connect ECONNREFUSED ::1:5432", "ECONNREFUSED")]),
      new Error("Connection terminated unexpectedly"),
      new Error("Connection terminated due to connection timeout"),
      new Error("timeout exceeded when trying to connect"),
      new Error("Client has encountered a connection error and is not queryable"),
      withCode("database is locked", "SQLITE_BUSY"),
      new StoreUnavailableError("the database is locked by another process"),
      new Error("wrapped", { cause: withCode("x", "57P01") }),
    ];
    for (const e of outages) {
      assert.equal(isStoreUnavailable(e), true, e.message);
      const api = toApiError(e);
      assert.equal(api?.httpStatus, 503, e.message);
      assert.equal(api?.toBody().code, 14);
    }
  });

  it("leaves bugs and constraint violations alone (they stay 500 or their own answer)", () => {
    const bugs = [
      withCode('duplicate key value violates unique constraint "users_email"', "23505"),
      withCode('relation "nope" does not exist', "42P01"),
      withCode("syntax error at or near", "42601"),
      withCode("UNIQUE constraint failed: users.email", "SQLITE_CONSTRAINT_UNIQUE"),
      withCode("database disk image is malformed", "SQLITE_CORRUPT"),
      new TypeError("Cannot read properties of undefined (reading 'id')"),
      new Error("Connection to the moon lost"),
      withCode("x", "ERR_INVALID_ARG_TYPE"),
      undefined,
      null,
      "a string",
    ];
    for (const e of bugs) {
      assert.equal(isStoreUnavailable(e), false, String((e as Error)?.message ?? e));
      assert.equal(toApiError(e), undefined);
    }
  });
});

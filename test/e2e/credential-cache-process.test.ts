// A served SQLite file changed by another process (docs/storage.md §3.1): `sigil serve`
// remembers the look-up of a key that stamps queries; an operator's shell beside it (here a
// separate node process writing the file) revokes the key, renames its user, and the very next
// request answers the change — the other process's commit moved PRAGMA data_version.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import path from "node:path";
import { Turnkey } from "@turnkey/sdk-server";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";

const run = promisify(execFile);
const sqlite = engines().find((e) => e.name === "sqlite")!;

describe("a served SQLite file changed by another process", { skip: sqlite.skip, timeout: 120_000 }, () => {
  let inst: Instance | undefined;
  let server: RunningServer | undefined;
  let init: InitResult;

  before(async () => {
    inst = await newInstance("sqlite");
    init = await sigilInit(inst, ["--name", "Shared File Org"]);
    server = await startServer(inst);
  });
  after(async () => {
    await server?.stop();
    await inst?.cleanup();
  });

  /** One statement, in a process of its own, on the server's file. */
  async function elsewhere(statement: string, ...params: string[]): Promise<void> {
    await run(
      process.execPath,
      [
        "-e",
        `const D = require("better-sqlite3"); const d = new D(process.argv[1]); d.pragma("busy_timeout = 5000"); d.prepare(process.argv[2]).run(...process.argv.slice(3)); d.close();`,
        path.join(inst!.dataDir, "sigil.db"),
        statement,
        ...params,
      ],
      { cwd: process.cwd() },
    );
  }

  it("a user renamed and a key deleted elsewhere are answered by the next request", async () => {
    const client = new Turnkey({
      apiBaseUrl: server!.url,
      apiPublicKey: init.apiPublicKey,
      apiPrivateKey: init.apiPrivateKey,
      defaultOrganizationId: init.organizationId,
    }).apiClient();
    const whoami = () => client.getWhoami({ organizationId: init.organizationId });
    // Looked up more than once: remembered.
    for (let i = 0; i < 3; i++) assert.equal((await whoami()).userId, init.userId);
    await elsewhere("UPDATE users SET name = ? WHERE id = ?", "renamed-elsewhere", init.userId);
    assert.equal((await whoami()).username, "renamed-elsewhere");
    await elsewhere("DELETE FROM api_keys WHERE public_key_normalized = ?", init.apiPublicKey.toLowerCase());
    const answer = await whoami().then(
      (w) => w,
      (e: unknown) => e,
    );
    assert.ok(answer instanceof Error && /could not find public key/.test(answer.message), `after the deletion: ${String(answer)}`);
  });
});

// Whether SQLite's WITHOUT ROWID layout would make the activity path cheaper: two copies of the
// activity tables (activities and votes with their indexes, as the migrations make them),
// one as is (a rowid B-tree plus a text primary-key index) and one WITHOUT ROWID (the rows
// clustered by the text key), filled to --rows activities in bulk, then measured over 20,000
// more activities written as the service writes them — one transaction each, activity row and
// vote, WAL with synchronous=NORMAL — with ids that are time-ordered (newOrderedId, what
// Sigil uses) or random (--random). docs/benchmarks.md §2.1 has the figures.
//
//   node --import tsx bench/sqlite-layout.ts [--rows 300000] [--random]
import Database from "better-sqlite3";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomBytes, randomUUID } from "node:crypto";
import { newOrderedId } from "../src/store/util.ts";
import { num } from "./options.ts";

const ROWS = num("--rows", "BENCH_ROWS", 300_000, 30_000, 10_000_000);
const RANDOM = process.argv.includes("--random");
const MEASURED = 20_000;
const newKey = RANDOM ? () => randomUUID() : () => newOrderedId();

function measure(withoutRowid: boolean, dir: string, round: number): { cpuUs: number; wallUs: number; mb: number } {
  const file = path.join(dir, `${withoutRowid ? "without-rowid" : "rowid"}-${round}.db`);
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  const layout = withoutRowid ? " WITHOUT ROWID" : "";
  db.exec(`CREATE TABLE activities (id text PRIMARY KEY, organization_id text NOT NULL, type text NOT NULL, status text NOT NULL,
    fingerprint text NOT NULL UNIQUE, intent text NOT NULL, result text, failure text, submitted_by text NOT NULL,
    created_at bigint NOT NULL, updated_at bigint NOT NULL)${layout}`);
  db.exec("CREATE INDEX activities_org_created ON activities (organization_id, created_at, id)");
  db.exec(`CREATE TABLE votes (id text PRIMARY KEY, activity_id text NOT NULL, user_id text NOT NULL, selection text NOT NULL,
    message text NOT NULL, public_key text NOT NULL, signature text NOT NULL, created_at bigint NOT NULL)${layout}`);
  db.exec("CREATE INDEX votes_activity ON votes (activity_id)");
  const activity = db.prepare("INSERT INTO activities VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  const vote = db.prepare("INSERT INTO votes VALUES (?,?,?,?,?,?,?,?)");
  const orgs = Array.from({ length: 1_000 }, () => randomUUID());
  // A create_user_tag's intent and a stamped body of about the benchmark's size.
  const intent = JSON.stringify({ createUserTagIntent: { userTagName: "t".repeat(40), userIds: [] }, pad: "p".repeat(300) });
  const write = (i: number) => {
    const id = newKey();
    const now = Date.now();
    activity.run(
      id,
      orgs[i % orgs.length],
      "ACTIVITY_TYPE_CREATE_USER_TAG",
      "ACTIVITY_STATUS_COMPLETED",
      randomBytes(32).toString("hex"),
      intent,
      `{"createUserTagResult":{"userTagId":"${randomUUID()}"}}`,
      null,
      randomUUID(),
      now,
      now,
    );
    vote.run(
      newKey(),
      id,
      randomUUID(),
      "VOTE_SELECTION_APPROVED",
      intent,
      `02${randomBytes(32).toString("hex")}`,
      randomBytes(70).toString("hex"),
      now,
    );
  };
  db.transaction((n: number) => {
    for (let i = 0; i < n; i++) write(i);
  })(ROWS);
  db.pragma("wal_checkpoint(TRUNCATE)");
  const one = db.transaction((i: number) => write(i));
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < MEASURED; i++) {
    one(i);
    if (i % 1_000 === 999) db.pragma("wal_checkpoint(PASSIVE)");
  }
  const used = process.cpuUsage(cpu);
  const wallUs = ((performance.now() - t0) * 1_000) / MEASURED;
  db.close();
  const mb = statSync(file).size / 1e6;
  rmSync(file);
  return { cpuUs: (used.user + used.system) / MEASURED, wallUs, mb };
}

const dir = mkdtempSync(path.join(tmpdir(), "sigil-bench-layout-"));
try {
  console.log(
    `${ROWS.toLocaleString("en-US")} activities, then ${MEASURED.toLocaleString("en-US")} measured; ids ${RANDOM ? "random (UUIDv4)" : "time-ordered (newOrderedId)"}`,
  );
  for (const [round, withoutRowid] of [false, true, false, true].entries()) {
    const r = measure(withoutRowid, dir, round);
    console.log(
      `  ${withoutRowid ? "WITHOUT ROWID" : "rowid        "}  ${r.cpuUs.toFixed(1)} µs CPU, ${r.wallUs.toFixed(1)} µs wall per activity (row + vote + commit); file ${r.mb.toFixed(0)} MB`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

// scripts/check-import-cycles.mjs holds the layer list of src/ (docs/layers.md §1): run on a
// small tree laid out like src/, it fails on an import that runs up the list, naming the file,
// the import and both layers, and passes the same tree once the import runs down.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { EXCEPTIONS, LAYERS, layerOf, layerViolations } from "../../scripts/layers.mjs";

const SCRIPT = path.resolve(import.meta.dirname, "../../scripts/check-import-cycles.mjs");
const NOTE = path.resolve(import.meta.dirname, "../../docs/layers.md");

/** Writes `files` (path under the tree → text) into a fresh directory; returns it. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "sigil-layers-"));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

function check(dir: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [SCRIPT, dir], { encoding: "utf8" });
  return { status: r.status, out: r.stdout + r.stderr };
}

describe("layer check", () => {
  it("fails on an import that runs up the layers, naming the file, the import and the two layers", (t) => {
    const dir = tree({
      "store/users.ts": 'import { step } from "../pipeline/steps.ts";\nexport const users = step;\n',
      "pipeline/steps.ts": "export const step = 1;\n",
    });
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const { status, out } = check(dir);
    assert.equal(status, 1, out);
    assert.match(
      out,
      /store\/users\.ts imports "\.\.\/pipeline\/steps\.ts" \(pipeline\/steps\.ts\): layer "store" may not import layer "pipeline"/,
    );
  });

  it("counts a type-only import as an edge", (t) => {
    const dir = tree({
      "auth/holder.ts": 'import type { Actor } from "../activities/define.ts";\nexport type Holder = Actor;\n',
      "activities/define.ts": "export interface Actor { userId: string }\n",
    });
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const { status, out } = check(dir);
    assert.equal(status, 1, out);
    assert.match(out, /auth\/holder\.ts imports .*layer "auth" may not import layer "activities"/);
  });

  it("passes the same imports when they run down", (t) => {
    const dir = tree({
      "pipeline/steps.ts": 'import { users } from "../store/users.ts";\nexport const step = users;\n',
      "store/users.ts": "export const users = 1;\n",
    });
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const { status, out } = check(dir);
    assert.equal(status, 0, out);
    assert.match(out, /no import runs up the layers/);
  });

  it("allows an import up that an exception names, and reports an exception whose import is gone", () => {
    const up = { from: "store/users.ts", to: "pipeline/steps.ts", specifier: "../pipeline/steps.ts" };
    const modules = [up.from, up.to];
    const exception = { from: up.from, to: up.to, why: "a debt kept for this test, with its reason" };
    assert.equal(layerViolations([up], modules, []).length, 1);
    assert.deepEqual(layerViolations([up], modules, [exception]), []);
    assert.deepEqual(layerViolations([], modules, [exception]), [
      "exception store/users.ts → pipeline/steps.ts: no such import runs up any more (remove it from EXCEPTIONS)",
    ]);
  });

  it("fails on a module no layer names", (t) => {
    const dir = tree({ "elsewhere/thing.ts": "export const thing = 1;\n" });
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const { status, out } = check(dir);
    assert.equal(status, 1, out);
    assert.match(out, /elsewhere\/thing\.ts: in no layer/);
  });

  it("places a file listed apart from its folder by the longer entry, and says why", () => {
    for (const layer of LAYERS) {
      for (const file of Object.keys(layer.placed ?? {})) {
        assert.ok(layer.modules.includes(file), `${layer.name}: placed ${file} is not in its modules`);
        assert.equal(LAYERS[layerOf(file)]!.name, layer.name);
      }
    }
    assert.equal(LAYERS[layerOf("crypto/rotate.ts")]!.name, "stored services");
    assert.equal(LAYERS[layerOf("crypto/envelope.ts")]!.name, "crypto");
    for (const e of EXCEPTIONS) assert.ok(e.why.length > 20, `${e.from} → ${e.to}: give the reason`);
  });

  it("docs/layers.md lists the same layers, in order, and every exception", () => {
    const note = readFileSync(NOTE, "utf8");
    const rows = [...note.matchAll(/^\| (\d+) \| ([^|]+) \| ([^|]+) \|/gm)].map((m) => ({
      name: m[2]!.trim(),
      modules: [...m[3]!.matchAll(/`([^`]+)`/g)].map((x) => x[1]),
    }));
    assert.deepEqual(
      rows,
      LAYERS.map((l) => ({ name: l.name, modules: l.modules })),
    );
    for (const layer of LAYERS) {
      for (const file of Object.keys(layer.placed ?? {}))
        assert.ok(note.includes(`- \`${file}\` (${layer.name}):`), `placed ${file} missing from docs/layers.md §1.1`);
    }
    for (const e of EXCEPTIONS)
      assert.ok(note.includes(`- \`${e.from}\` → \`${e.to}\`:`), `exception ${e.from} missing from docs/layers.md §2`);
  });
});

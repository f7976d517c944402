// The layers of src/, lowest first (docs/layers.md §1). A module may import its own layer and
// the layers below it; an import that runs up the list is an error unless EXCEPTIONS names it
// with a reason. check-import-cycles.mjs builds the import edges (type imports included: a
// type names the module it comes from as much as a value does) and calls layerViolations.
//
// A module belongs to the layer of the longest entry that names it: a folder ("store/") or a
// file ("store/data-dir.ts"). A file listed apart from its folder says why in `placed`.

/** @typedef {{ name: string, modules: string[], why: string, placed?: Record<string, string> }} Layer */

/** @type {Layer[]} */
export const LAYERS = [
  {
    name: "foundation",
    modules: ["errors.ts", "cache/", "config/define.ts", "store/data-dir.ts"],
    why: "the error shape, the LRU, the declaration of a knob: nothing of the service",
    placed: { "store/data-dir.ts": "private files and directories on disk, no database: the master key file uses it too" },
  },
  { name: "policy", modules: ["policy/"], why: "the policy language: parse, check, compile, evaluate facts" },
  { name: "schemas", modules: ["schemas/"], why: "request and response shapes and their validation" },
  {
    name: "crypto",
    modules: ["crypto/", "auth-proxy/channel.ts"],
    why: "envelopes and their bindings, P-256, bundles, master-key sources",
    placed: {
      "auth-proxy/channel.ts":
        "the wire between the API and the proxy service (routes, HMAC, sealing in transit): the store and the configuration read its types",
    },
  },
  { name: "store", modules: ["store/"], why: "tables, engines, transactions, locks; one module per table family" },
  {
    name: "stored services",
    modules: ["app-proofs/", "webhooks/", "wallets/", "signing/", "crypto/rotate.ts", "auth/service-keys.ts"],
    why: "domain code over the store that no request shapes: app proofs, the webhook outbox and delivery, wallets, signing, service keys",
    placed: {
      "crypto/rotate.ts": "re-seals every sealed column: walks the store's tables",
      "auth/service-keys.ts": "the service's own keys, sealed in the store: the login methods sign and verify with them as the stamps do",
    },
  },
  {
    name: "logins",
    modules: ["logins/", "frames/origins.ts"],
    why: "one folder per login method (manifest, knobs, mechanism) and what they share: the declaration, LoginSettings",
    placed: { "frames/origins.ts": "the frames' origin knob, which the configuration gathers" },
  },
  {
    name: "auth",
    modules: ["auth/", "auth-proxy/", "network/"],
    why: "who is asking and from where: stamps (verified with the login methods' mechanisms), principals, network rules",
  },
  { name: "configuration", modules: ["config.ts"], why: "every knob, gathered from the modules that declare them" },
  { name: "runtimes", modules: ["tvc/", "frames/"], why: "the TVC runtime and the frames: built from the configuration" },
  {
    name: "activities",
    modules: ["activities/", "governance/", "policy-dryrun/"],
    why: "activity definitions and their helpers; governance (policies, root quorum, the facts they read) and its dry run",
  },
  { name: "views", modules: ["views/"], why: "the API's view of stored activities and TVC objects" },
  { name: "service state", modules: ["service-state.ts"], why: "the caches one store's service keeps between requests" },
  {
    name: "workers",
    modules: ["webhooks/dispatcher.ts", "webhooks/fan-out.ts", "webhooks/lane-runner.ts", "tvc/service.ts"],
    why: "loops started beside the API that read the service state",
    placed: {
      "webhooks/dispatcher.ts": "the delivery loop: reads the service state's caches",
      "webhooks/fan-out.ts": "the delivery loop's fan-out step",
      "webhooks/lane-runner.ts": "the delivery loop's lanes",
      "tvc/service.ts": "starts the TVC runtime with the service state",
    },
  },
  { name: "queries", modules: ["queries/"], why: "query definitions" },
  { name: "pipeline", modules: ["pipeline/"], why: "the request path: authenticate, validate, authorize, execute, respond" },
  { name: "service", modules: ["service.ts"], why: "opening a store with its service state" },
  { name: "entry points", modules: ["server/", "proxy/", "console/", "cli/"], why: "the HTTP apps and the command line" },
];

/**
 * Imports allowed to run up the list, each with its reason: `from` imports `to` (paths under
 * src/). Keep it short: an entry is a debt, not a design.
 * @type {{ from: string, to: string, why: string }[]}
 */
export const EXCEPTIONS = [];

/** The layer index of a module path relative to src/ (posix separators), or -1. */
export function layerOf(rel) {
  let best = -1;
  let bestLength = -1;
  LAYERS.forEach((layer, i) => {
    for (const m of layer.modules) {
      const hit = m.endsWith("/") ? rel.startsWith(m) : rel === m;
      if (hit && m.length > bestLength) {
        best = i;
        bestLength = m.length;
      }
    }
  });
  return best;
}

/**
 * Every import that runs up the layers, and every module no layer names.
 * @param {{ from: string, to: string, specifier: string }[]} imports paths relative to src/
 * @param {string[]} modules every module relative to src/
 * @param {{ from: string, to: string, why: string }[]} [exceptions] EXCEPTIONS unless given (the tests give their own)
 */
export function layerViolations(imports, modules, exceptions = EXCEPTIONS) {
  const problems = [];
  for (const m of modules) {
    if (layerOf(m) < 0) problems.push(`${m}: in no layer (add it to LAYERS in scripts/layers.mjs)`);
  }
  const excepted = new Set(exceptions.map((e) => `${e.from}\0${e.to}`));
  const used = new Set();
  for (const { from, to, specifier } of imports) {
    const a = layerOf(from);
    const b = layerOf(to);
    if (a < 0 || b < 0 || b <= a) continue;
    const key = `${from}\0${to}`;
    if (excepted.has(key)) {
      used.add(key);
      continue;
    }
    problems.push(
      `${from} imports ${JSON.stringify(specifier)} (${to}): layer "${LAYERS[a].name}" may not import layer "${LAYERS[b].name}", which is above it`,
    );
  }
  // An exception whose module no longer imports up is stale: dropping it keeps the list a list of debts.
  for (const e of exceptions) {
    if (modules.includes(e.from) && !used.has(`${e.from}\0${e.to}`))
      problems.push(`exception ${e.from} → ${e.to}: no such import runs up any more (remove it from EXCEPTIONS)`);
  }
  return problems;
}

// The PKCS#11 token's thread (docs/custody.md §3): every call into the token library runs
// here, so a slow or hung token never stalls the event loop. Plain JavaScript: workers do not
// inherit the tsx loader, and the bundle copies this file next to main.mjs.
//
// Requests: { id, op, ... } → replies { id, ok: true, out } or { id, ok: false, kind, message }
// where kind is "unavailable" (the token is away: 503, retried), "refused" (the token answered,
// the value did not open) or "config" (no such token / key, wrong PIN: a setup mistake).
import { parentPort, workerData } from "node:worker_threads";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const pkcs11js = require("pkcs11js");
const { library, tokenLabel, keyLabel, pin } = workerData;

/** How often a token that went away is tried again, at most (ms). [our choice] */
const RECONNECT_EVERY_MS = 200;

const p = new pkcs11js.PKCS11();
let loaded = false;
/** { session, key, mechanisms } while connected. */
let conn;
let lastAttempt = 0;
let lastFailure = "";

class TokenError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

const codeOf = (err) => (err && typeof err.message === "string" ? err.message.split(/[\s:]/)[0] : "");

function initialize() {
  try {
    // Several threads may call the library (a replaced thread, a second client): its own locks.
    p.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
  } catch (err) {
    if (codeOf(err) !== "CKR_CRYPTOKI_ALREADY_INITIALIZED") throw err;
  }
}

function connect() {
  if (!loaded) {
    p.load(library);
    loaded = true;
  }
  initialize();
  const slot = p.C_GetSlotList(true).find((s) => p.C_GetTokenInfo(s).label.trim() === tokenLabel);
  if (slot === undefined) throw new TokenError("config", `no PKCS#11 token labelled ${JSON.stringify(tokenLabel)} is present`);
  const session = p.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
  try {
    p.C_Login(session, pkcs11js.CKU_USER, pin);
  } catch (err) {
    const code = codeOf(err);
    if (code === "CKR_PIN_INCORRECT" || code === "CKR_PIN_LOCKED" || code === "CKR_PIN_INVALID")
      throw new TokenError("config", `the token refused the PIN (${code})`);
    if (code !== "CKR_USER_ALREADY_LOGGED_IN") throw err;
  }
  const mechanisms = new Set(p.C_GetMechanismList(slot));
  return { session, mechanisms, key: findKey(session) };
}

function findKey(session) {
  p.C_FindObjectsInit(session, [
    { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
    { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_AES },
    { type: pkcs11js.CKA_LABEL, value: keyLabel },
  ]);
  let found;
  try {
    found = p.C_FindObjects(session, 2);
  } finally {
    p.C_FindObjectsFinal(session);
  }
  if (found.length === 0) return undefined;
  if (found.length > 1)
    throw new TokenError("config", `the token holds several AES keys labelled ${JSON.stringify(keyLabel)}; key labels must be unique`);
  return found[0];
}

function disconnect() {
  conn = undefined;
  // The library's state is process-wide; finalizing forgets sessions and handles of a token
  // that went away, so the next connect() starts clean (SoftHSM2 needs it after a re-plug).
  try {
    p.C_Finalize();
  } catch {
    // not initialized: nothing to finalize
  }
}

/** A connected token with its key; throws TokenError("unavailable") while it cannot be reached. */
function connected(needKey = true) {
  if (!conn) {
    const now = Date.now();
    if (now - lastAttempt < RECONNECT_EVERY_MS) throw new TokenError("unavailable", `the token is unavailable (${lastFailure})`);
    lastAttempt = now;
    try {
      conn = connect();
    } catch (err) {
      lastFailure = err.message;
      disconnect();
      if (err instanceof TokenError) throw err;
      throw new TokenError("unavailable", `the token is unavailable (${err.message})`);
    }
  }
  if (needKey && conn.key === undefined) {
    conn.key = findKey(conn.session);
    if (conn.key === undefined)
      throw new TokenError(
        "config",
        `the token holds no AES key labelled ${JSON.stringify(keyLabel)} (create it with \`sigil master-key create-pkcs11\`)`,
      );
  }
  return conn;
}

const gcm = (iv, aad) => ({
  mechanism: pkcs11js.CKM_AES_GCM,
  parameter: { type: pkcs11js.CK_PARAMS_AES_GCM, iv, aad, ivBits: 96, tagBits: 128 },
});

function encryptGcm(c, iv, aad, data) {
  p.C_EncryptInit(c.session, gcm(iv, aad), c.key);
  return p.C_Encrypt(c.session, data, Buffer.alloc(data.length + 16));
}

function decryptGcm(c, iv, aad, data) {
  p.C_DecryptInit(c.session, gcm(iv, aad), c.key);
  return p.C_Decrypt(c.session, data, Buffer.alloc(data.length));
}

const KW_PAD = { mechanism: pkcs11js.CKM_AES_KEY_WRAP_PAD };

function wrapKw(c, data) {
  // AES-KW wraps key objects: the data key becomes a session object for the moment of the call.
  const obj = p.C_CreateObject(c.session, [
    { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
    { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_GENERIC_SECRET },
    { type: pkcs11js.CKA_TOKEN, value: false },
    { type: pkcs11js.CKA_EXTRACTABLE, value: true },
    { type: pkcs11js.CKA_VALUE, value: data },
  ]);
  try {
    return p.C_WrapKey(c.session, KW_PAD, c.key, obj, Buffer.alloc(data.length + 16));
  } finally {
    p.C_DestroyObject(c.session, obj);
  }
}

function unwrapKw(c, data) {
  const obj = p.C_UnwrapKey(c.session, KW_PAD, c.key, data, [
    { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
    { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_GENERIC_SECRET },
    { type: pkcs11js.CKA_TOKEN, value: false },
    { type: pkcs11js.CKA_SENSITIVE, value: false },
    { type: pkcs11js.CKA_EXTRACTABLE, value: true },
  ]);
  try {
    return p.C_GetAttributeValue(c.session, obj, [{ type: pkcs11js.CKA_VALUE }])[0].value;
  } finally {
    p.C_DestroyObject(c.session, obj);
  }
}

/** What the key is: its check value, length, whether it could leave the token, the mechanisms. */
function info() {
  const c = connected();
  const attrs = p.C_GetAttributeValue(c.session, c.key, [
    { type: pkcs11js.CKA_VALUE_LEN },
    { type: pkcs11js.CKA_EXTRACTABLE },
    { type: pkcs11js.CKA_SENSITIVE },
  ]);
  let kcv = "";
  try {
    kcv = p.C_GetAttributeValue(c.session, c.key, [{ type: pkcs11js.CKA_CHECK_VALUE }])[0].value.toString("hex");
  } catch {
    // a key without a check value: kcv stays empty
  }
  return {
    valueLen: attrs[0].value.readUInt32LE(0), // a CK_ULONG in the host's byte order (little-endian here)
    extractable: attrs[1].value[0] === 1,
    sensitive: attrs[2].value[0] === 1,
    kcv,
    gcm: c.mechanisms.has(pkcs11js.CKM_AES_GCM),
    kw: c.mechanisms.has(pkcs11js.CKM_AES_KEY_WRAP_PAD),
  };
}

/** Generates the key-encryption key on the token: AES-256, sensitive, never extractable. */
function generate() {
  const c = connected(false);
  if (findKey(c.session) !== undefined)
    throw new TokenError("config", `the token already holds an AES key labelled ${JSON.stringify(keyLabel)}`);
  c.key = p.C_GenerateKey(c.session, { mechanism: pkcs11js.CKM_AES_KEY_GEN }, [
    { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
    { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_AES },
    { type: pkcs11js.CKA_VALUE_LEN, value: 32 },
    { type: pkcs11js.CKA_LABEL, value: keyLabel },
    { type: pkcs11js.CKA_TOKEN, value: true },
    { type: pkcs11js.CKA_PRIVATE, value: true },
    { type: pkcs11js.CKA_SENSITIVE, value: true },
    { type: pkcs11js.CKA_EXTRACTABLE, value: false },
    { type: pkcs11js.CKA_ENCRYPT, value: true },
    { type: pkcs11js.CKA_DECRYPT, value: true },
    { type: pkcs11js.CKA_WRAP, value: true },
    { type: pkcs11js.CKA_UNWRAP, value: true },
  ]);
  return info();
}

/** Whether the token still answers with the key (after a failed unwrap: the value's fault, or the token's?). */
function answers(c) {
  try {
    if (c.mechanisms.has(pkcs11js.CKM_AES_GCM)) encryptGcm(c, Buffer.alloc(12), Buffer.alloc(0), Buffer.alloc(16));
    else wrapKw(c, Buffer.alloc(32));
    return true;
  } catch {
    return false;
  }
}

function run(m) {
  switch (m.op) {
    case "info":
      return info();
    case "generate":
      return generate();
    case "wrap": {
      const c = connected();
      return m.mech === "gcm" ? encryptGcm(c, Buffer.from(m.iv), Buffer.from(m.aad), Buffer.from(m.data)) : wrapKw(c, Buffer.from(m.data));
    }
    case "unwrap": {
      const c = connected();
      try {
        return m.mech === "gcm"
          ? decryptGcm(c, Buffer.from(m.iv), Buffer.from(m.aad), Buffer.from(m.data))
          : unwrapKw(c, Buffer.from(m.data));
      } catch (err) {
        // SoftHSM2 answers a wrong tag with CKR_GENERAL_ERROR, the same code as some outages:
        // a token that still encrypts says the value is at fault.
        if (answers(c)) throw new TokenError("refused", `the token did not open the data key (${codeOf(err)})`);
        throw err;
      }
    }
    default:
      throw new TokenError("config", `unknown operation ${m.op}`);
  }
}

parentPort.on("message", (m) => {
  let reply;
  try {
    const out = run(m);
    reply = { id: m.id, ok: true, out };
  } catch (err) {
    if (err instanceof TokenError) {
      reply = { id: m.id, ok: false, kind: err.kind, message: err.message };
    } else {
      // Anything else the library says (device removed, session or handle gone, general
      // error) means the token is not serving: reconnect on the next call.
      lastFailure = err?.message ?? String(err);
      disconnect();
      lastAttempt = 0;
      reply = { id: m.id, ok: false, kind: "unavailable", message: `the token is unavailable (${lastFailure})` };
    }
  }
  parentPort.postMessage(reply);
});

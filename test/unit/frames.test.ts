// The frames' pure parts (docs/frames.md §3.3, §3.4): key formats round-trip and match the
// encodings wallets use; APPLY_SETTINGS takes only allowed properties with matching values.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import { KEY_FORMATS, decodeKey, encodeKey, keyFormatOf } from "../../src/frames/key-formats.ts";
import { parseSettings } from "../../src/frames/styles.ts";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { staticSettings, writeFrames } from "../../src/frames/build.ts";

const ONE = new Uint8Array(32);
ONE[31] = 1;

describe("frame key formats", () => {
  it("every format round-trips a random key", () => {
    for (const format of KEY_FORMATS) {
      for (let i = 0; i < 5; i++) {
        const key = secp256k1.utils.randomSecretKey();
        assert.deepEqual(decodeKey(encodeKey(key, format), format), key, format);
      }
    }
  });

  it("matches the wallets' encodings: hex, the WIF of key 1, Solana's key pair", () => {
    assert.equal(encodeKey(ONE, "HEXADECIMAL"), `0x${"00".repeat(31)}01`);
    assert.deepEqual(decodeKey(`${"00".repeat(31)}01`, "HEXADECIMAL"), ONE);
    // Bitcoin's well-known compressed WIF of private key 1.
    assert.equal(encodeKey(ONE, "BITCOIN_MAINNET_WIF"), "KwDiBf89QgGbjEhKnhXJuH7LrciVrZi3qYjgd9M7rFU73sVHnoWn");
    assert.equal(encodeKey(ONE, "BITCOIN_TESTNET_WIF"), "cMahea7zqjxrtgAbB7LSGbcQUr1uX1ojuat9jZodMN87JcbXMTcA");
    const seed = ed25519.utils.randomSecretKey();
    const pair = base58.decode(encodeKey(seed, "SOLANA"));
    assert.deepEqual(pair.slice(0, 32), seed);
    assert.deepEqual(pair.slice(32), ed25519.getPublicKey(seed));
    assert.match(encodeKey(seed, "SUI_BECH32"), /^suiprivkey1[02-9ac-hj-np-z]+$/);
  });

  it("refuses wrong lengths, a mismatched Solana pair, another network's WIF, an unknown format", () => {
    assert.throws(() => decodeKey("0x1234", "HEXADECIMAL"), /32-byte/);
    assert.throws(() => decodeKey("zz".repeat(32), "HEXADECIMAL"), /hexadecimal/);
    assert.throws(() => decodeKey("", "HEXADECIMAL"), /no private key/);
    assert.throws(() => decodeKey("1".repeat(301), "SOLANA"), /too long/);
    const pair = base58.decode(encodeKey(ed25519.utils.randomSecretKey(), "SOLANA"));
    pair[63] = pair[63]! ^ 1;
    assert.throws(() => decodeKey(base58.encode(pair), "SOLANA"), /does not belong/);
    assert.throws(() => decodeKey(encodeKey(ONE, "BITCOIN_TESTNET_WIF"), "BITCOIN_MAINNET_WIF"), /version/);
    assert.throws(() => keyFormatOf("PEM"), /unsupported key format/);
    assert.equal(keyFormatOf(undefined), "HEXADECIMAL");
    assert.throws(() => encodeKey(new Uint8Array(31), "HEXADECIMAL"), /32-byte/);
  });
});

describe("APPLY_SETTINGS", () => {
  it("takes what the kit sends", () => {
    const s = parseSettings(JSON.stringify({ styles: { fontSize: "16px", backgroundColor: "#e5e7eb", color: "#828282" } }));
    assert.deepEqual({ ...s }, { fontSize: "16px", backgroundColor: "#e5e7eb", color: "#828282" });
    assert.deepEqual({ ...parseSettings("{}") }, {});
  });

  it("refuses other properties, values that could load or escape, and non-JSON", () => {
    assert.throws(() => parseSettings(JSON.stringify({ styles: { backgroundImage: "url(https://x)" } })), /unsupported style property/);
    assert.throws(() => parseSettings(JSON.stringify({ styles: { color: "red; background: url(https://x)" } })), /invalid value for color/);
    assert.throws(() => parseSettings(JSON.stringify({ styles: { fontFamily: 'a"; }' } })), /invalid value for fontFamily/);
    assert.throws(() => parseSettings('{"styles": {"__proto__": "1px"}}'), /unsupported style property/);
    assert.throws(() => parseSettings("{"), /not JSON/);
    assert.throws(() => parseSettings({ styles: {} }), /JSON string/);
    assert.throws(() => parseSettings("x".repeat(20_000)), /too long/);
  });
});

describe("the static frames (npm run build)", () => {
  it("settings come from SIGIL_FRAMES_API_URL / SIGIL_FRAMES_PARENT_ORIGINS, else PORT and SIGIL_CORS_ORIGINS", () => {
    assert.deepEqual(
      staticSettings({
        SIGIL_FRAMES_API_URL: "https://api.example/",
        SIGIL_FRAMES_PARENT_ORIGINS: "https://a.example, https://b.example",
        SIGIL_CORS_ORIGINS: "https://c.example",
      }),
      {
        apiBaseUrl: "https://api.example",
        parentOrigins: ["https://a.example", "https://b.example"],
      },
    );
    assert.deepEqual(staticSettings({ PORT: "9000", SIGIL_CORS_ORIGINS: "https://c.example" }), {
      apiBaseUrl: "http://127.0.0.1:9000",
      parentOrigins: ["https://c.example"],
    });
    assert.throws(() => staticSettings({ SIGIL_FRAMES_PARENT_ORIGINS: "https://a.example/app" }), /scheme:\/\/host/);
  });

  it("writes the pages, their bundles, config.js and _headers with the CSP", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "sigil-frames-"));
    try {
      const written = await writeFrames(dir, { apiBaseUrl: "https://api.example", parentOrigins: ["https://app.example"] });
      assert.deepEqual(written, ["_headers", "config.js", "export.html", "export.js", "frames.css", "import.html", "import.js"]);
      assert.match(
        readFileSync(path.join(dir, "config.js"), "utf8"),
        /SIGIL_FRAMES_CONFIG = \{"apiBaseUrl":"https:\/\/api\.example","parentOrigins":\["https:\/\/app\.example"\]\}/,
      );
      const headers = readFileSync(path.join(dir, "_headers"), "utf8");
      assert.match(
        headers,
        /^\/\*\n {2}content-security-policy: default-src 'none'; script-src 'self'; style-src 'self'; connect-src https:\/\/api\.example; .*frame-ancestors https:\/\/app\.example\n/,
      );
      assert.match(
        readFileSync(path.join(dir, "export.html"), "utf8"),
        /<script src="config.js" defer><\/script>\s*<script src="export.js" defer><\/script>/,
      );
      assert.ok(readFileSync(path.join(dir, "import.js"), "utf8").includes("/public/v1/discovery/keys"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

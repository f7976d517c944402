// Headless Debian Chromium (playwright-core) with a CDP virtual authenticator, on a page this
// helper serves from http://localhost:<port>: the page holds the official browser-side code —
// @turnkey/http's getWebAuthnAttestation and @turnkey/webauthn-stamper — bundled at test
// time with esbuild, and the test drives it through page.evaluate.
import http from "node:http";
import { existsSync } from "node:fs";
import path from "node:path";
import type { AddressInfo } from "node:net";
import type { CDPSession } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
/** What launchChromium starts: CHROMIUM, unable to raise its own priority (chromium.sh). */
const LAUNCHER = path.join(import.meta.dirname, "chromium.sh");
const ROOT = path.resolve(import.meta.dirname, "../..");

/** Why browser tests cannot run here, or undefined. */
export function browserMissing(): string | undefined {
  return existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is not installed (apt-get install chromium): browser tests skipped`;
}

// What the page exposes: core's createWebPasskey (challenge, encodings, options — docs/logins.md §6.2) and
// the stamper core uses for passkeys.
const PAGE_SCRIPT = `
import { getWebAuthnAttestation } from "@turnkey/http";
import { WebauthnStamper } from "@turnkey/webauthn-stamper";

const b64url = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");

window.passkeys = {
  async create(rpId, userName) {
    const challenge = crypto.getRandomValues(new Uint8Array(32));
    const attestation = await getWebAuthnAttestation({
      publicKey: {
        rp: { id: rpId, name: "" },
        challenge: challenge.buffer,
        pubKeyCredParams: [{ type: "public-key", alg: -7 }, { type: "public-key", alg: -257 }],
        user: { id: crypto.getRandomValues(new Uint8Array(32)).buffer, name: userName, displayName: userName },
        authenticatorSelection: { requireResidentKey: true, residentKey: "required", userVerification: "preferred" },
      },
    });
    return { encodedChallenge: b64url(challenge), attestation };
  },
  async stamp(rpId, payload) {
    return new WebauthnStamper({ rpId }).stamp(payload);
  },
};
`;

export interface PasskeyPage {
  /** http://localhost:<port>: the origin the passkeys are made on. */
  origin: string;
  /** navigator.credentials.create as core does it: `{ encodedChallenge, attestation }`. */
  createPasskey(userName: string): Promise<{
    encodedChallenge: string;
    attestation: { credentialId: string; clientDataJson: string; attestationObject: string; transports: string[] };
  }>;
  /** The stamper's `{ stampHeaderName, stampHeaderValue }` for `payload` (navigator.credentials.get). */
  stamp(payload: string): Promise<{ stampHeaderName: string; stampHeaderValue: string }>;
  /** The virtual authenticator's credentials (CDP), e.g. their sign counts. */
  credentials(): Promise<{ credentialId: string; signCount: number }[]>;
  close(): Promise<void>;
}

/** The page: `script` (ES modules from node_modules) bundled for the browser with esbuild, served at / on 127.0.0.1. */
export async function servePage(script: string, title: string): Promise<{ port: number; close(): Promise<void> }> {
  const { build } = await import("esbuild");
  const bundle = await build({
    stdin: { contents: script, resolveDir: ROOT, loader: "js" },
    bundle: true,
    write: false,
    platform: "browser",
    format: "iife",
    logLevel: "silent",
  });
  const code = bundle.outputFiles[0]!.text;
  const server = http.createServer((req, res) => {
    if (req.url === "/page.js") res.writeHead(200, { "content-type": "text/javascript" }).end(code);
    else if (req.url === "/")
      res.writeHead(200, { "content-type": "text/html" }).end(`<!doctype html><title>${title}</title><script src="/page.js"></script>`);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An empty page at every path on 127.0.0.1: an origin of its own for a test to fetch from. */
export async function serveBlankPage(title: string): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((_req, res) =>
    res.writeHead(200, { "content-type": "text/html" }).end(`<!doctype html><title>${title}</title>`),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Headless Debian Chromium, as every browser test launches it: through chromium.sh, which starts
 * it without the right to raise its threads' priority (nice -8 as root), so that it cannot
 * starve the servers and jobs beside it (docs/testing.md §4).
 */
export async function launchChromium(): Promise<import("playwright-core").Browser> {
  const { chromium } = await import("playwright-core");
  return chromium.launch({ executablePath: LAUNCHER, headless: true, args: ["--no-sandbox"] });
}

/** A CDP virtual authenticator on the page: ctap2, internal, resident keys, user verification, presence simulated. */
export async function addVirtualAuthenticator(cdp: CDPSession): Promise<string> {
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return authenticatorId;
}

/** Serves the page, launches Chromium, opens the page with a virtual authenticator (ctap2, internal, resident keys, UV). */
export async function openPasskeyPage(rpId = "localhost"): Promise<PasskeyPage> {
  const server = await servePage(PAGE_SCRIPT, "passkeys");
  const origin = `http://localhost:${server.port}`;

  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const cdp = await page.context().newCDPSession(page);
    const authenticatorId = await addVirtualAuthenticator(cdp);
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => "passkeys" in window);
    return {
      origin,
      createPasskey: (userName) =>
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        page.evaluate(([id, name]) => (window as any).passkeys.create(id, name), [rpId, userName] as const),
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      stamp: (payload) => page.evaluate(([id, p]) => (window as any).passkeys.stamp(id, p), [rpId, payload] as const),
      async credentials() {
        const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
        return credentials.map((c) => ({ credentialId: c.credentialId, signCount: c.signCount }));
      },
      async close() {
        await browser.close();
        await server.close();
      },
    };
  } catch (err) {
    await browser.close();
    await server.close();
    throw err;
  }
}

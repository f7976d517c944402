// A software WebAuthn authenticator for tests: registrations (a "none" attestation, CBOR and
// authenticator data built by hand) and assertions (ES256 or RS256, signed with node:crypto),
// encoded as the Turnkey clients encode them (docs/stamps.md §3, docs/logins.md §6.2). Every
// field can be bent (wrong challenge, origin, RP ID, flags, counter, alphabet) to test what
// the server refuses.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import type { Harness, Json, Res } from "./inproc.ts";

export const sha256 = (data: Uint8Array | string): Buffer => createHash("sha256").update(data).digest();
export const b64url = (b: Uint8Array): string => Buffer.from(b).toString("base64url");

// --- minimal CBOR (definite lengths): what attestation objects and COSE keys use ---
type Cbor = number | string | Uint8Array | Cbor[] | Map<number | string, Cbor>;

function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
  if (n < 0x10000) {
    const b = Buffer.alloc(3);
    b[0] = (major << 5) | 25;
    b.writeUInt16BE(n, 1);
    return b;
  }
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}

export function cbor(v: Cbor): Buffer {
  if (typeof v === "number") return v >= 0 ? head(0, v) : head(1, -1 - v);
  if (typeof v === "string") {
    const s = Buffer.from(v, "utf8");
    return Buffer.concat([head(3, s.length), s]);
  }
  if (v instanceof Uint8Array) return Buffer.concat([head(2, v.length), Buffer.from(v)]);
  if (Array.isArray(v)) return Buffer.concat([head(4, v.length), ...v.map(cbor)]);
  const parts: Buffer[] = [head(5, v.size)];
  for (const [k, val] of v) parts.push(cbor(k), cbor(val));
  return Buffer.concat(parts);
}

export type Alg = "ES256" | "RS256";

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0, 0);
  return b;
}

export interface PasskeyOptions {
  rpId?: string;
  origin?: string;
  alg?: Alg;
  /** Starting signature counter; 0 = an authenticator that keeps none (it then always reports 0). */
  counter?: number;
}

export interface RegistrationOptions {
  /** The `challenge` parameter sent (default: b64url of 32 random bytes, as core sends it). */
  challenge?: string;
  /** What clientData.challenge carries (default: the challenge as given). */
  clientDataChallenge?: string;
  type?: string;
  origin?: string;
  rpId?: string;
  flags?: number;
  /** The credential id put inside authData (default: the passkey's). */
  authDataCredentialId?: Uint8Array;
  fmt?: string;
  attStmt?: Map<number | string, Cbor>;
  name?: string;
  transports?: string[];
}

export interface AssertionOptions {
  /** The body whose hash is the challenge (default: the body stamped). */
  challengeBody?: string;
  type?: string;
  origin?: string;
  rpId?: string;
  flags?: number;
  /** The counter to report (default: the next one). */
  counter?: number;
  /** Encode the fields in standard base64 with padding instead of b64url. */
  base64?: boolean;
  /** Sign with another key (a forged stamp). */
  signWith?: KeyObject;
}

/** One credential of a software authenticator. */
export class SoftPasskey {
  readonly credentialId: Buffer;
  readonly alg: Alg;
  readonly rpId: string;
  readonly origin: string;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  counter: number;

  constructor(opts: PasskeyOptions = {}) {
    this.alg = opts.alg ?? "ES256";
    this.rpId = opts.rpId ?? "localhost";
    this.origin = opts.origin ?? "http://localhost:3000";
    this.counter = opts.counter ?? 1;
    this.credentialId = randomBytes(20);
    const pair =
      this.alg === "ES256" ? generateKeyPairSync("ec", { namedCurve: "P-256" }) : generateKeyPairSync("rsa", { modulusLength: 2048 });
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
  }

  /** b64url of the raw credential id, as core sends it and the server stores it. */
  get id(): string {
    return b64url(this.credentialId);
  }

  coseKey(): Buffer {
    const jwk = this.publicKey.export({ format: "jwk" });
    if (this.alg === "ES256") {
      return cbor(
        new Map<number, Cbor>([
          [1, 2],
          [3, -7],
          [-1, 1],
          [-2, Buffer.from(jwk.x!, "base64url")],
          [-3, Buffer.from(jwk.y!, "base64url")],
        ]),
      );
    }
    return cbor(
      new Map<number, Cbor>([
        [1, 3],
        [3, -257],
        [-1, Buffer.from(jwk.n!, "base64url")],
        [-2, Buffer.from(jwk.e!, "base64url")],
      ]),
    );
  }

  /** AuthenticatorParamsV2 for create_authenticators / recover_user / users' `authenticators`. */
  registration(o: RegistrationOptions = {}): Json {
    const challenge = o.challenge ?? b64url(randomBytes(32));
    const clientDataJson = Buffer.from(
      JSON.stringify({
        type: o.type ?? "webauthn.create",
        challenge: o.clientDataChallenge ?? challenge,
        origin: o.origin ?? this.origin,
        crossOrigin: false,
      }),
    );
    const credId = Buffer.from(o.authDataCredentialId ?? this.credentialId);
    const idLen = Buffer.alloc(2);
    idLen.writeUInt16BE(credId.length, 0);
    const authData = Buffer.concat([
      sha256(o.rpId ?? this.rpId),
      Buffer.from([o.flags ?? FLAG_UP | FLAG_UV | FLAG_AT]),
      u32(this.counter),
      Buffer.alloc(16), // AAGUID: zeros, as platform authenticators without attestation send
      idLen,
      credId,
      this.coseKey(),
    ]);
    const attestationObject = cbor(
      new Map<string, Cbor>([
        ["fmt", o.fmt ?? "none"],
        ["attStmt", o.attStmt ?? new Map()],
        ["authData", authData],
      ]),
    );
    return {
      authenticatorName: o.name ?? "soft passkey",
      challenge,
      attestation: {
        credentialId: this.id,
        clientDataJson: b64url(clientDataJson),
        attestationObject: b64url(attestationObject),
        transports: o.transports ?? ["AUTHENTICATOR_TRANSPORT_INTERNAL"],
      },
    };
  }

  /** The X-Stamp-WebAuthn header value for `body`, as @turnkey/webauthn-stamper makes it. */
  stamp(body: string, o: AssertionOptions = {}): string {
    const challenge = Buffer.from(sha256(o.challengeBody ?? body).toString("hex"), "ascii");
    const clientDataJson = Buffer.from(
      JSON.stringify({ type: o.type ?? "webauthn.get", challenge: b64url(challenge), origin: o.origin ?? this.origin, crossOrigin: false }),
    );
    if (o.counter === undefined && this.counter > 0) this.counter++;
    const counter = o.counter ?? this.counter;
    const authenticatorData = Buffer.concat([sha256(o.rpId ?? this.rpId), Buffer.from([o.flags ?? FLAG_UP | FLAG_UV]), u32(counter)]);
    const data = Buffer.concat([authenticatorData, sha256(clientDataJson)]);
    // ES256: DER, as authenticators produce it; RS256: PKCS#1 v1.5.
    const signature = sign("sha256", data, o.signWith ?? this.privateKey);
    const enc = (b: Buffer) => (o.base64 ? b.toString("base64") : b64url(b));
    return JSON.stringify({
      authenticatorData: enc(authenticatorData),
      clientDataJson: enc(clientDataJson),
      credentialId: enc(this.credentialId),
      signature: enc(signature),
    });
  }
}

/** A user entry (create_users V4) whose only credential is `passkey`. */
export function passkeyUser(passkey: SoftPasskey, over: Json = {}): Json {
  return {
    userName: `pk-${randomBytes(4).toString("hex")}`,
    apiKeys: [],
    authenticators: [passkey.registration()],
    oauthProviders: [],
    userTags: [],
    ...over,
  };
}

let lastTimestamp = 0;

/** POST submit/<op> with the SDK's envelope, stamped by the passkey (X-Stamp-Webauthn). */
export function submitWithPasskey(
  h: Harness,
  passkey: SoftPasskey,
  op: string,
  type: string,
  parameters: Json,
  organizationId: string,
  stamp: AssertionOptions = {},
): Promise<Res> {
  lastTimestamp = Math.max(Date.now(), lastTimestamp + 1);
  const body = JSON.stringify({ parameters, organizationId, timestampMs: String(lastTimestamp), type });
  return h.post(`/public/v1/submit/${op}`, body, { "X-Stamp-Webauthn": passkey.stamp(body, stamp) });
}

/** POST query/<op> stamped by the passkey. */
export function queryWithPasskey(h: Harness, passkey: SoftPasskey, op: string, body: Json, stamp: AssertionOptions = {}): Promise<Res> {
  const raw = JSON.stringify(body);
  return h.post(`/public/v1/query/${op}`, raw, { "X-Stamp-Webauthn": passkey.stamp(raw, stamp) });
}

/** The login settings the in-process tests run with: what SoftPasskey produces by default. */
export const TEST_WEBAUTHN = { rpId: "localhost", origins: ["http://localhost:3000"] };

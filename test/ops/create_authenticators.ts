import { it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import {
  addUsersWithKeys,
  assertIdempotent,
  completed,
  conflict,
  exhausted,
  forbidden,
  invalidRequest,
  notFound,
  perEngine,
  UUID,
  type Json,
} from "../helpers/inproc.ts";
import { SoftPasskey, TEST_WEBAUTHN, cbor } from "../helpers/webauthn.ts";
import { DEFAULT_LOGIN_SETTINGS } from "../../src/logins/settings.ts";
import { createAuthenticatorsV2 } from "../../src/activities/authenticators/create_authenticators.ts";

const OP = "create_authenticators";
const V2 = "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2";
const MISSING = "00000000-0000-4000-8000-000000000000";
const logins = { ...DEFAULT_LOGIN_SETTINGS, webauthn: TEST_WEBAUTHN };

perEngine(
  "create_authenticators",
  (h) => {
    it("registers ES256 and RS256 passkeys; the user view and get_authenticators show them", async () => {
      const [u] = await addUsersWithKeys(h(), 1);
      const es = new SoftPasskey();
      const rs = new SoftPasskey({ alg: "RS256", counter: 0 });
      const params = {
        userId: u!.userId,
        authenticators: [
          es.registration({ name: "laptop" }),
          rs.registration({ name: "phone", transports: ["AUTHENTICATOR_TRANSPORT_HYBRID", "AUTHENTICATOR_TRANSPORT_USB"] }),
        ],
      };
      const { authenticatorIds } = completed(await h().submit(OP, V2, params), createAuthenticatorsV2);
      assert.equal(authenticatorIds.length, 2);
      for (const id of authenticatorIds) assert.match(id, UUID);
      const user = (await h().query("get_user", { userId: u!.userId })).json.user as Json;
      assert.equal(user.authenticators.length, 2);
      const laptop = user.authenticators.find((a: Json) => a.authenticatorName === "laptop");
      assert.equal(laptop.credentialId, es.id);
      assert.equal(laptop.authenticatorId, authenticatorIds[0]);
      assert.equal(laptop.attestationType, "none");
      assert.equal(laptop.aaguid, "00000000-0000-0000-0000-000000000000");
      assert.deepEqual(laptop.transports, ["AUTHENTICATOR_TRANSPORT_INTERNAL"]);
      assert.equal(laptop.credential.type, "CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR");
      assert.equal(laptop.credential.publicKey, es.coseKey().toString("base64url"));
      assert.equal(laptop.model, "");
      assert.match(laptop.createdAt.seconds, /^\d+$/);
      const phone = user.authenticators.find((a: Json) => a.authenticatorName === "phone");
      assert.deepEqual(phone.transports, ["AUTHENTICATOR_TRANSPORT_HYBRID", "AUTHENTICATOR_TRANSPORT_USB"]);
      const listed = (await h().query("get_authenticators", { userId: u!.userId })).json.authenticators as Json[];
      assert.deepEqual(listed.map((a) => a.authenticatorId).sort(), [...authenticatorIds].sort());
    });

    it("accepts standard base64 with padding, and React Native's hex challenge", async () => {
      const pk = new SoftPasskey();
      const reg = pk.registration();
      const std = (s: string) => Buffer.from(s, "base64url").toString("base64");
      reg.attestation.clientDataJson = std(reg.attestation.clientDataJson);
      reg.attestation.attestationObject = std(reg.attestation.attestationObject);
      completed(await h().submit(OP, V2, { userId: h().root.userId, authenticators: [reg] }), createAuthenticatorsV2);
      const hex = randomBytes(32).toString("hex");
      const rn = new SoftPasskey();
      // As given to the native API, and as the browser encodes the string's bytes.
      completed(
        await h().submit(OP, V2, { userId: h().root.userId, authenticators: [rn.registration({ challenge: hex })] }),
        createAuthenticatorsV2,
      );
      const rn2 = new SoftPasskey();
      const reg2 = rn2.registration({ challenge: hex, clientDataChallenge: Buffer.from(hex).toString("base64url") });
      completed(await h().submit(OP, V2, { userId: h().root.userId, authenticators: [reg2] }), createAuthenticatorsV2);
    });

    it("a non-root user may add passkeys to itself without a policy, not to another user (403)", async () => {
      const [a, b] = await addUsersWithKeys(h(), 2);
      completed(
        await h().submit(OP, V2, { userId: a!.userId, authenticators: [new SoftPasskey().registration()] }, { as: a }),
        createAuthenticatorsV2,
      );
      forbidden(await h().submit(OP, V2, { userId: b!.userId, authenticators: [new SoftPasskey().registration()] }, { as: a }));
    });

    it("the same body twice is one activity", async () => {
      await assertIdempotent(h(), OP, V2, { userId: h().root.userId, authenticators: [new SoftPasskey().registration()] });
    });

    it("refuses a credential id already registered in the organization (409); another organization may hold it", async () => {
      const pk = new SoftPasskey();
      const [u] = await addUsersWithKeys(h(), 1);
      completed(await h().submit(OP, V2, { userId: u!.userId, authenticators: [pk.registration()] }), createAuthenticatorsV2);
      conflict(await h().submit(OP, V2, { userId: h().root.userId, authenticators: [pk.registration()] }), /already exists/);
      conflict(await h().submit(OP, V2, { userId: h().root.userId, authenticators: [pk.registration(), pk.registration()] }), /twice/);
      const other = await h().newOrg("Passkey Other");
      completed(
        await h().submit(OP, V2, { userId: other.userId, authenticators: [pk.registration()] }, { as: other }),
        createAuthenticatorsV2,
      );
    });

    it("holds at most 10 passkeys per user (429) and writes nothing of a refused request", async () => {
      const [u] = await addUsersWithKeys(h(), 1);
      const regs = (n: number) => Array.from({ length: n }, () => new SoftPasskey().registration());
      completed(await h().submit(OP, V2, { userId: u!.userId, authenticators: regs(9) }), createAuthenticatorsV2);
      exhausted(await h().submit(OP, V2, { userId: u!.userId, authenticators: regs(2) }), /user has exceeded maximum authenticators/);
      assert.equal((await h().query("get_authenticators", { userId: u!.userId })).json.authenticators.length, 9);
      completed(await h().submit(OP, V2, { userId: u!.userId, authenticators: regs(1) }), createAuthenticatorsV2);
      exhausted(await h().submit(OP, V2, { userId: u!.userId, authenticators: regs(1) }), /maximum authenticators/);
    });

    it("refuses an unknown user (404)", async () => {
      notFound(await h().submit(OP, V2, { userId: MISSING, authenticators: [new SoftPasskey().registration()] }));
    });

    const pk = () => new SoftPasskey();
    const F = "parameters.authenticators[0]";
    const refused: [string, () => Json, RegExp, string][] = [
      ["a challenge that is not clientData's", () => ({ ...pk().registration(), challenge: "AAAA" }), /challenge/, `${F}.challenge`],
      [
        "a webauthn.get clientData",
        () => pk().registration({ type: "webauthn.get" }),
        /webauthn.create/,
        `${F}.attestation.clientDataJson`,
      ],
      [
        "an origin that is not configured",
        () => pk().registration({ origin: "https://evil.example" }),
        /origin/,
        `${F}.attestation.clientDataJson`,
      ],
      ["another RP ID", () => pk().registration({ rpId: "evil.example" }), /RP ID/i, `${F}.attestation.attestationObject`],
      ["no user presence", () => pk().registration({ flags: 0x44 }), /presen/i, `${F}.attestation.attestationObject`],
      [
        "authData holding another credential id",
        () => pk().registration({ authDataCredentialId: randomBytes(20) }),
        /credential id inside/,
        `${F}.attestation.credentialId`,
      ],
      [
        "a none attestation with a statement",
        () => pk().registration({ attStmt: new Map([["sig", new Uint8Array([1])]]) }),
        /attestation/i,
        `${F}.attestation.attestationObject`,
      ],
      [
        "an unknown attestation format",
        () => pk().registration({ fmt: "made-up" }),
        /Unsupported Attestation Format/,
        `${F}.attestation.attestationObject`,
      ],
      [
        "an attestationObject that is not CBOR",
        () => {
          const r = pk().registration();
          r.attestation.attestationObject = cbor("x").toString("base64url");
          return r;
        },
        /invalid authenticator attestation/,
        `${F}.attestation.attestationObject`,
      ],
      [
        "a credentialId that is not base64url",
        () => {
          const r = pk().registration();
          r.attestation.credentialId = "not base64!";
          return r;
        },
        /base64url/,
        `${F}.attestation.credentialId`,
      ],
      [
        "an unknown transport",
        () => pk().registration({ transports: ["AUTHENTICATOR_TRANSPORT_CARRIER_PIGEON"] }),
        /AUTHENTICATOR_TRANSPORT_BLE/,
        `${F}.attestation.transports[0]`,
      ],
      ["a blank name", () => pk().registration({ name: " " }), /authenticatorName/, `${F}.authenticatorName`],
    ];
    for (const [what, reg, message, field] of refused) {
      it(`refuses ${what} (400, naming the field)`, async () => {
        invalidRequest(await h().submit(OP, V2, { userId: h().root.userId, authenticators: [reg()] }), message, [field]);
      });
    }

    it("refuses no authenticators and more than 10 in one request", async () => {
      invalidRequest(await h().submit(OP, V2, { userId: h().root.userId, authenticators: [] }), /1 to 10/, ["parameters.authenticators"]);
      const eleven = Array.from({ length: 11 }, () => pk().registration());
      invalidRequest(await h().submit(OP, V2, { userId: h().root.userId, authenticators: eleven }), /1 to 10/, [
        "parameters.authenticators",
      ]);
    });
  },
  undefined,
  { logins },
);

// Field schemas shared by many operations. Each carries the message a client sees when
// its value is rejected (`errorMessage`), so errors say what is expected, not how TypeBox
// phrases a failed check.
import { Type, type TSchema } from "@sinclair/typebox";

export const UUID_PATTERN = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

export const Id = (what: string) =>
  Type.String({
    pattern: UUID_PATTERN,
    errorMessage: `must be ${/^[aeiou]/.test(what) ? "an" : "a"} ${what} id (UUID)`,
    description: `${what} id (UUID)`,
  });

export const OrganizationId = Id("organization");

export const Name = (what: string, max = 256) =>
  Type.String({
    minLength: 1,
    maxLength: max,
    pattern: "\\S",
    errorMessage: `${what} must be 1 to ${max} characters and not blank`,
  });

// Deliberately simple: one @, no spaces, a dot in the domain. Full RFC 5322 accepts
// addresses no mail system delivers to.
export const Email = Type.String({
  maxLength: 254,
  pattern: "^[^\\s@]{1,64}@[^\\s@.]+(\\.[^\\s@.]+)+$",
  errorMessage: "must be a valid email address (at most 254 characters)",
});

export const PhoneNumber = Type.String({
  pattern: "^\\+[1-9][0-9]{6,14}$",
  errorMessage: "must be an E.164 phone number such as +14155550100",
});

export const UintString = (what: string, max = 16) =>
  Type.String({ pattern: `^[0-9]{1,${max}}$`, errorMessage: `${what} must be a string of decimal digits` });

export const Pagination = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: "^[0-9]{1,3}$", errorMessage: "limit must be a number from 1 to 100, as a string" })),
    before: Type.Optional(Type.String({ maxLength: 64 })),
    after: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { description: "limit: 1-100 (default 10); before/after: id of an item of a previous page" },
);

export const ApiKeyCurve = Type.Union(
  [Type.Literal("API_KEY_CURVE_P256"), Type.Literal("API_KEY_CURVE_SECP256K1"), Type.Literal("API_KEY_CURVE_ED25519")],
  { errorMessage: "must be API_KEY_CURVE_P256, API_KEY_CURVE_SECP256K1 or API_KEY_CURVE_ED25519" },
);

export const HexPublicKey = Type.String({
  minLength: 64,
  maxLength: 130,
  pattern: "^[0-9a-fA-F]+$",
  errorMessage: "must be a hex-encoded public key",
});

export const ExpirationSeconds = Type.String({
  pattern: "^[1-9][0-9]{0,9}$",
  errorMessage: "invalid api key expiration: must be a positive whole number of seconds, as a string",
});

/** API key as create_api_keys V2 and the V5 user params take it. */
export const ApiKeyParamsV2 = Type.Object({
  apiKeyName: Name("apiKeyName"),
  publicKey: HexPublicKey,
  curveType: ApiKeyCurve,
  expirationSeconds: Type.Optional(ExpirationSeconds),
});

/** API key as create_api_keys V1 takes it: P-256 only. */
export const ApiKeyParamsV1 = Type.Object({
  apiKeyName: Name("apiKeyName"),
  publicKey: HexPublicKey,
  expirationSeconds: Type.Optional(ExpirationSeconds),
});

export const Timestamp = Type.Object({ seconds: Type.String(), nanos: Type.String() });

export function maxItems<T extends TSchema>(schema: T, what: string, max: number, min = 0) {
  return Type.Array(schema, {
    minItems: min,
    maxItems: max,
    errorMessage: min > 0 ? `${what} must hold ${min} to ${max} items` : `${what} must hold at most ${max} items`,
  });
}

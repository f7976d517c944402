// One error type for every rejection. Thrown anywhere; turned into the SDK's
// `{ code, message, details }` body (grpc-gateway style; docs/activities.md §7) in
// server/error-handler.ts.

/** gRPC status codes the SDK clients receive as `code`. */
export const Grpc = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;
export type GrpcCode = (typeof Grpc)[keyof typeof Grpc];

/** The HTTP status grpc-gateway uses for each gRPC code. */
const HTTP_STATUS: Record<GrpcCode, number> = {
  3: 400,
  5: 404,
  6: 409,
  7: 403,
  8: 429,
  9: 400,
  12: 501,
  13: 500,
  14: 503,
  16: 401,
};

/** The documented `turnkeyErrorCode` categories we emit. */
export type ErrorCategory =
  | "INTERNAL"
  | "ORGANIZATION_NOT_FOUND"
  | "ORGANIZATION_MISMATCH"
  | "REQUEST_NOT_AUTHORIZED"
  | "PUBLIC_KEY_NOT_FOUND"
  | "SIGNATURE_MISSING"
  | "SIGNATURE_INVALID"
  | "CREDENTIAL_NOT_FOUND"
  | "CREDENTIAL_CONFLICT"
  | "API_KEY_EXPIRED"
  | "REQUEST_INVALID"
  | "FORBIDDEN"
  | "UNAUTHENTICATED"
  | "INVALID_ORGANIZATION_ID"
  | "INVALID_EMAIL"
  | "RATE_LIMIT_EXCEEDED"
  | "EMAIL_SENDING_DISABLED"
  | "INVALID_OIDC_TOKEN"
  | "OAUTH_PROVIDER_ALREADY_EXISTS"
  | "UNSPECIFIED";

export interface FieldViolation {
  field: string;
  description: string;
}

export type ErrorDetail = Record<string, unknown> & { "@type": string };

export class ApiError extends Error {
  readonly code: GrpcCode;
  readonly category: ErrorCategory;
  readonly extraDetails: ErrorDetail[];

  readonly #status: number | undefined;
  /**
   * Set by keepWrites(): a handler's failure whose writes must stay (a wrong OTP code counts
   * an attempt). The activity is then recorded FAILED with this error, its writes committed,
   * and the request answered with the error (pipeline/settle.ts).
   */
  keepsWrites = false;
  /**
   * For 429s: seconds until the limit lets the caller in again, sent as the Retry-After
   * header (server/error-handler.ts, server/app.ts; docs/otp-limits-and-mail.md §5).
   */
  retryAfterSeconds: number | undefined;

  constructor(
    code: GrpcCode,
    category: ErrorCategory,
    message: string,
    extraDetails: ErrorDetail[] = [],
    /** Overrides the gateway mapping where HTTP has a more precise status (413: docs/activities.md §7.3). */
    status?: number,
  ) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.category = category;
    this.extraDetails = extraDetails;
    this.#status = status;
  }

  get httpStatus(): number {
    return this.#status ?? HTTP_STATUS[this.code];
  }

  toBody(): { code: number; message: string; details: ErrorDetail[] } {
    return {
      code: this.code,
      message: this.message,
      details: [{ "@type": "type.googleapis.com/errors.v1.TurnkeyErrorDetail", turnkeyErrorCode: this.category }, ...this.extraDetails],
    };
  }
}

// Constructors for the common cases, so call sites read as what happened.

/** Marks a handler's error as one whose writes are committed with the FAILED activity (see ApiError.keepsWrites). */
export function keepWrites(err: ApiError): ApiError {
  err.keepsWrites = true;
  return err;
}

/** The error a recorded failure (`activities.failure`, ApiError.toBody() JSON) was made from. */
export function apiErrorFromFailure(failure: string): ApiError {
  const body = JSON.parse(failure) as { code: GrpcCode; message: string; details?: ErrorDetail[] };
  const [first, ...rest] = body.details ?? [];
  const category = (first?.turnkeyErrorCode as ErrorCategory | undefined) ?? "UNSPECIFIED";
  return new ApiError(body.code, category, body.message, first?.turnkeyErrorCode ? rest : (body.details ?? []));
}

export function invalid(message: string, violations: FieldViolation[] = []): ApiError {
  const extra: ErrorDetail[] = violations.length
    ? [{ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: violations }]
    : [];
  return new ApiError(Grpc.INVALID_ARGUMENT, "REQUEST_INVALID", message, extra);
}

/** 403: the caller may not do this at all — not a policy's decision, and nothing is recorded. */
export function permissionDenied(message: string, category: ErrorCategory = "REQUEST_NOT_AUTHORIZED"): ApiError {
  return new ApiError(Grpc.PERMISSION_DENIED, category, message);
}

export function precondition(message: string): ApiError {
  return new ApiError(Grpc.FAILED_PRECONDITION, "REQUEST_INVALID", message);
}

export function notFound(message: string, category: ErrorCategory = "REQUEST_INVALID"): ApiError {
  return new ApiError(Grpc.NOT_FOUND, category, message);
}

export function alreadyExists(message: string): ApiError {
  return new ApiError(Grpc.ALREADY_EXISTS, "REQUEST_INVALID", message);
}

export function unauthenticated(category: ErrorCategory, message: string): ApiError {
  return new ApiError(Grpc.UNAUTHENTICATED, category, message);
}

/** 429 RESOURCE_EXHAUSTED; with `retryAfterMs` the answer carries Retry-After (whole seconds, at least 1). */
export function exhausted(message: string, retryAfterMs?: number): ApiError {
  const err = new ApiError(Grpc.RESOURCE_EXHAUSTED, "RATE_LIMIT_EXCEEDED", message);
  if (retryAfterMs !== undefined) err.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return err;
}

// oidc-provider v8 ships no type declarations (and @types/oidc-provider is not installed): the
// part of its API that test/helpers/oidc-server.ts uses.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  interface ClientMetadata {
    client_id: string;
    client_secret?: string;
    redirect_uris?: string[];
    grant_types?: string[];
    response_types?: string[];
    token_endpoint_auth_method?: string;
  }
  interface Interaction {
    uid: string;
    params: Record<string, unknown>;
  }
  interface AccountClaims {
    sub: string;
    [claim: string]: unknown;
  }
  interface Account {
    accountId: string;
    claims(): AccountClaims | Promise<AccountClaims>;
  }
  interface Configuration {
    clients?: ClientMetadata[];
    pkce?: { methods?: string[]; required?: (ctx: unknown, client: unknown) => boolean };
    jwks?: { keys: object[] };
    cookies?: { keys?: string[] };
    features?: Record<string, { enabled: boolean }>;
    interactions?: { url?: (ctx: unknown, interaction: Interaction) => string };
    claims?: Record<string, string[]>;
    scopes?: string[];
    ttl?: Record<string, number | ((ctx: unknown, token: unknown, client: { clientId: string }) => number)>;
    findAccount?: (ctx: unknown, id: string) => Account | undefined | Promise<Account | undefined>;
    renderError?: (ctx: { type: string; body: unknown }, out: object, error: unknown) => void | Promise<void>;
  }
  class Grant {
    constructor(init: { accountId: string; clientId: string });
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }
  interface AccessToken {
    accountId?: string;
    clientId?: string;
  }
  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: object,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    on(event: string, listener: (...args: unknown[]) => void): this;
    Grant: typeof Grant;
    AccessToken: { find(token: string): Promise<AccessToken | undefined> };
  }
}

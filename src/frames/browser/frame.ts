/// <reference lib="dom" />
// What the export and import frames share (docs/frames.md §2–4): their configuration (written
// by the frames server or the static build into config.js, never taken from the parent), the
// parent check, and @turnkey/iframe-stamper's channel — the parent posts
// TURNKEY_INIT_MESSAGE_CHANNEL with a MessagePort once the frame has loaded; every request then
// comes through that port as {type, requestId, ...} and is answered there as
// {type: <reply>, value, requestId} or {type: "ERROR", value: <message>, requestId}.
import { fetchServiceKeys, publicKeysFor } from "../../../lib/client/client.mjs";

export interface FramesConfig {
  /** The API the frame reads BUNDLE_SIGNER keys from (scheme://host[:port]). */
  apiBaseUrl: string;
  /** Exact origins allowed to drive the frame. */
  parentOrigins: string[];
}

/** A request handler: the reply's type and what computes its value. */
export interface Handler {
  reply: string;
  run(message: Record<string, unknown>): Promise<unknown>;
}

function isOrigin(v: unknown): v is string {
  if (typeof v !== "string") return false;
  try {
    const u = new URL(v);
    return (u.protocol === "https:" || u.protocol === "http:") && u.origin === v;
  } catch {
    return false;
  }
}

/** The configuration config.js set, or undefined when it is missing or malformed. */
export function readConfig(): FramesConfig | undefined {
  const c = (globalThis as { SIGIL_FRAMES_CONFIG?: unknown }).SIGIL_FRAMES_CONFIG as Partial<FramesConfig> | undefined;
  if (!c || !isOrigin(c.apiBaseUrl) || !Array.isArray(c.parentOrigins) || !c.parentOrigins.every(isOrigin)) return undefined;
  return { apiBaseUrl: c.apiBaseUrl, parentOrigins: [...c.parentOrigins] };
}

export function setStatus(text: string, state: string): void {
  const el = document.getElementById("status");
  if (el) {
    el.textContent = text;
    el.dataset.state = state;
  }
}

/**
 * The deployment's BUNDLE_SIGNER keys, read from the configured API at the time of use (a
 * rotation is seen at once). Both active and published keys: both are the deployment's.
 */
export async function bundleSignerKeys(config: FramesConfig): Promise<string[]> {
  let keys;
  try {
    keys = await fetchServiceKeys(config.apiBaseUrl);
  } catch (err) {
    throw new Error(`could not read the signer keys from ${config.apiBaseUrl}: ${(err as Error).message}`);
  }
  const signers = publicKeysFor(keys, "BUNDLE_SIGNER");
  if (signers.length === 0) throw new Error(`${config.apiBaseUrl} publishes no BUNDLE_SIGNER key`);
  return signers;
}

/** A string field of a request, or an error naming it. */
export function stringField(message: Record<string, unknown>, name: string, maxLength = 65_536): string {
  const v = Object.hasOwn(message, name) ? message[name] : undefined;
  if (typeof v !== "string" || v.length === 0) throw new Error(`${name} is required`);
  if (v.length > maxLength) throw new Error(`${name} is too long`);
  return v;
}

/**
 * Waits for the parent's channel: only the first TURNKEY_INIT_MESSAGE_CHANNEL, only from the
 * window that embeds this frame, only from an allowed origin; anything else is dropped and
 * shown in the status line. `publicKey` is what PUBLIC_KEY_READY carries.
 */
export function serveChannel(config: FramesConfig, publicKey: () => string, handlers: Record<string, Handler>): void {
  let port: MessagePort | undefined;
  // Requests run one after the other, in the order they came.
  let queue: Promise<void> = Promise.resolve();

  const answer = async (data: unknown): Promise<void> => {
    if (typeof data !== "object" || data === null) return;
    const message = data as Record<string, unknown>;
    const type = typeof message.type === "string" ? message.type : "";
    const requestId = typeof message.requestId === "string" ? message.requestId : undefined;
    const handler = Object.hasOwn(handlers, type) ? handlers[type] : undefined;
    try {
      if (!handler) throw new Error(`unsupported message type ${JSON.stringify(type.slice(0, 60))}`);
      const value = await handler.run(message);
      port?.postMessage({ type: handler.reply, value, ...(requestId ? { requestId } : {}) });
    } catch (err) {
      // The stamper rejects the request's promise with this text (its onMessageHandler).
      port?.postMessage({
        type: "ERROR",
        value: String(err instanceof Error ? `Error: ${err.message}` : err),
        ...(requestId ? { requestId } : {}),
      });
    }
  };

  window.addEventListener("message", (event: MessageEvent) => {
    const data = event.data as { type?: unknown } | null;
    if (port || typeof data !== "object" || data === null || data.type !== "TURNKEY_INIT_MESSAGE_CHANNEL") return;
    if (event.source !== window.parent || window.parent === window || !config.parentOrigins.includes(event.origin)) {
      setStatus(`Refused a channel from ${event.origin || "an unknown origin"}: not an allowed parent.`, "refused");
      return;
    }
    const offered = event.ports[0];
    if (!offered) return;
    port = offered;
    port.onmessage = (e: MessageEvent) => {
      queue = queue.then(() => answer(e.data));
    };
    setStatus("", "connected");
    port.postMessage({ type: "PUBLIC_KEY_READY", value: publicKey() });
  });
}

/** Applies APPLY_SETTINGS' checked styles to `target` (backgroundColor to the page as well). */
export function applyStyles(target: HTMLElement, styles: Record<string, string>): void {
  for (const [name, value] of Object.entries(styles)) {
    if (name === "labelColor") {
      for (const label of Array.from(document.querySelectorAll<HTMLElement>("label, .label"))) label.style.color = value;
      continue;
    }
    target.style.setProperty(
      name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`),
      value,
    );
  }
  if (styles.backgroundColor) {
    document.documentElement.style.backgroundColor = styles.backgroundColor;
    document.body.style.backgroundColor = styles.backgroundColor;
  }
}

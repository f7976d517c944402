/// <reference lib="dom" />
// What every page shares: Preact's h (no JSX: the sources type-check with the service's own
// tsconfig, docs/console.md §1), loading state for API reads, the error banner, formats.
import { h, type ComponentChildren, type VNode as PreactVNode } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiError } from "./api.ts";

export { h };
export type { ComponentChildren };
/** Any element or component output (Preact's VNode is generic in its props). */
export type VNode = PreactVNode<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface Load<T> {
  data?: T;
  error?: unknown;
  loading: boolean;
  reload(): void;
}

/** Runs `fn` when `deps` change; a late answer for older deps is dropped. */
export function useLoad<T>(fn: () => Promise<T>, deps: unknown[]): Load<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ data: s.data, loading: true }));
    fn().then(
      (data) => live && setState({ data, loading: false }),
      (error: unknown) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
    // The caller's deps are the effect's inputs (a hook-deps linter would ask for `load` too).
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** An API error (message and code) or any other failure, in the page, never a crash. */
export function ErrorBanner(props: { error: unknown }): VNode | null {
  const e = props.error;
  if (e === undefined || e === null) return null;
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- whatever was thrown, as it stringifies
  const message = e instanceof Error ? e.message : String(e);
  const code = e instanceof ApiError ? e.code : "";
  return h(
    "div",
    { class: "error-banner", role: "alert", "data-testid": "error-banner", "data-code": code },
    h("strong", null, code || "error"),
    " ",
    message,
  );
}

export function Loading(props: { what?: string }): VNode {
  return h("p", { class: "muted" }, `Loading${props.what ? ` ${props.what}` : ""}…`);
}

/** A time as the API gives it: epoch ms as a string or number, or {seconds, nanos}. */
export function fmtTime(v: unknown): string {
  let ms: number | undefined;
  if (typeof v === "string" || typeof v === "number") ms = Number(v);
  else if (v && typeof v === "object" && "seconds" in v)
    ms = Number((v as { seconds: string }).seconds) * 1000 + Math.floor(Number((v as { nanos?: string }).nanos ?? 0) / 1e6);
  if (ms === undefined || !Number.isFinite(ms)) return "";
  return new Date(ms)
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, "Z");
}

/** Epoch ms of such a time, or NaN. */
export function timeMs(v: unknown): number {
  if (typeof v === "string" || typeof v === "number") return Number(v);
  if (v && typeof v === "object" && "seconds" in v) return Number((v as { seconds: string }).seconds) * 1000;
  return NaN;
}

/** ACTIVITY_STATUS_CONSENSUS_NEEDED → consensus needed */
export const shortEnum = (v: string, prefix: string): string =>
  (v.startsWith(prefix) ? v.slice(prefix.length) : v).toLowerCase().replace(/_/g, " ");

export const statusLabel = (s: string) => shortEnum(s, "ACTIVITY_STATUS_");
export const typeLabel = (t: string) => shortEnum(t, "ACTIVITY_TYPE_");

export function Json(props: { value: unknown }): VNode {
  return h("pre", { class: "json" }, JSON.stringify(props.value, null, 2));
}

export function Section(props: { title: string; children?: ComponentChildren; testid?: string }): VNode {
  return h(
    "section",
    { class: "card", ...(props.testid ? { "data-testid": props.testid } : {}) },
    h("h2", null, props.title),
    props.children,
  );
}

/** A read-only notice for an organization the credential's user does not belong to. */
export function ReadOnlyNote(props: { readOnly: boolean }): VNode | null {
  return props.readOnly ? h("p", { class: "note", "data-testid": "read-only" }, "Read-only: this is not your own organization.") : null;
}

/** A hash link: #/org/<id>/<rest>. */
export const orgHref = (orgId: string, rest = "") => `#/org/${encodeURIComponent(orgId)}${rest ? `/${rest}` : ""}`;

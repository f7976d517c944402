// What `sigil serve` gives the frames server (docs/frames.md §4, §5.1): the API as browsers
// reach it, and the parent origins — SIGIL_FRAMES_PARENT_ORIGINS, else the origins the API
// already trusts for browsers: SIGIL_CORS_ORIGINS and those enabled auth proxy configurations
// list (a configuration that lists none, i.e. allows any origin, adds nothing: a frame that
// holds a key is never open to every page).
import type { Config } from "../config.ts";
import type { Executor } from "../store/schema.ts";
import { enabledOrigins } from "../auth-proxy/origins.ts";
import type { FramesSettings } from "./build.ts";

export async function framesSettingsFrom(
  config: Pick<Config, "host" | "corsOrigins" | "framesApiUrl" | "framesParentOrigins">,
  apiPort: number,
  db: Executor,
): Promise<FramesSettings> {
  const host =
    config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host.includes(":") ? `[${config.host}]` : config.host;
  const apiBaseUrl = config.framesApiUrl ?? `http://${host}:${apiPort}`;
  const parentOrigins = config.framesParentOrigins ?? [...new Set([...config.corsOrigins, ...(await enabledOrigins(db)).origins])];
  return { apiBaseUrl, parentOrigins };
}

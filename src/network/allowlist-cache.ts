// The IP allowlists of root organizations, compiled, per store (one cache on the service
// state). Keyed by organizations.ip_allowlist_version, which every request reads with its
// credential (no statement of its own) and every allowlist change bumps in its transaction:
// a node never enforces a list older than the request that raced the change. Version 0
// (never had a list) costs no look-up at all.
import type { Db } from "../store/schema.ts";
import { readAllowlists } from "../store/ip-allowlists.ts";
import { compileAllowlists, type CompiledAllowlists } from "./allowlist.ts";

const MAX_CACHED = 10_000;

export class AllowlistCache {
  readonly #byOrganization = new Map<string, { version: number; lists: CompiledAllowlists | undefined }>();

  async get(db: Db, organizationId: string, version: number): Promise<CompiledAllowlists | undefined> {
    if (version === 0) return undefined;
    const hit = this.#byOrganization.get(organizationId);
    if (hit && hit.version === version) return hit.lists;
    const lists = compileAllowlists(await readAllowlists(db, organizationId));
    // A slower reader of an older version never replaces a newer entry.
    const now = this.#byOrganization.get(organizationId);
    if (!now || now.version < version) {
      if (this.#byOrganization.size >= MAX_CACHED) this.#byOrganization.clear();
      this.#byOrganization.set(organizationId, { version, lists });
    }
    return lists;
  }
}

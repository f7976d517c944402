/// <reference lib="dom" />
import type { PageProps } from "../page.ts";
import { h, type VNode } from "../ui.ts";

export function WalletsPage(_p: PageProps): VNode {
  return h("p", { class: "muted" }, "Coming soon.");
}

// Wallet queries (get_wallet, list_wallets, get_wallet_account, list_wallet_accounts): what
// was derived, never the seed (it stays sealed in the store).
import { Type } from "@sinclair/typebox";
import { invalid, notFound } from "../errors.ts";
import { Id, OrganizationId, Pagination } from "../schemas/common.ts";
import { page, pageRequest, unknownCursor } from "../store/pagination.ts";
import {
  findWallet,
  listWalletRows,
  walletAccountView,
  WalletAccountSchema,
  WalletSchema,
  walletView,
  type WalletRow,
} from "../store/wallets.ts";
import { normalPath } from "../wallets/accounts.ts";
import { canonicalAddress } from "../wallets/lookup.ts";
import { defineQuery } from "./define.ts";

export const getWallet = defineQuery({
  op: "get_wallet",
  summary: "Get a wallet (never its seed).",
  request: Type.Object({ organizationId: OrganizationId, walletId: Id("wallet") }),
  response: Type.Object({ wallet: WalletSchema }),
  async run({ db, organization }, req) {
    const w = await findWallet(db, organization.id, req.walletId);
    if (!w) throw notFound(`no wallet ${req.walletId} in organization ${organization.id}`);
    return { wallet: walletView(w) };
  },
});

export const listWallets = defineQuery({
  op: "list_wallets",
  summary: "List the organization's wallets, oldest first.",
  request: Type.Object({ organizationId: OrganizationId }),
  response: Type.Object({ wallets: Type.Array(WalletSchema) }),
  async run({ db, organization }) {
    return { wallets: (await listWalletRows(db, organization.id)).map(walletView) };
  },
});

const AddressOrPath = Type.String({ minLength: 1, maxLength: 256 });

export const getWalletAccount = defineQuery({
  op: "get_wallet_account",
  summary: "Get one account of a wallet, by address or by path (an address names exactly one account).",
  request: Type.Object({
    organizationId: OrganizationId,
    walletId: Id("wallet"),
    address: Type.Optional(AddressOrPath),
    path: Type.Optional(AddressOrPath),
  }),
  response: Type.Object({ account: WalletAccountSchema }),
  async run({ db, organization }, req) {
    if ((req.address === undefined) === (req.path === undefined)) {
      throw invalid("give exactly one of address or path", [
        { field: "address", description: "exactly one of address or path must be set" },
      ]);
    }
    if (!(await findWallet(db, organization.id, req.walletId)))
      throw notFound(`no wallet ${req.walletId} in organization ${organization.id}`);
    let q = db
      .selectFrom("wallet_accounts")
      .selectAll()
      .where("wallet_id", "=", req.walletId)
      .where("organization_id", "=", organization.id);
    q = req.address !== undefined ? q.where("address", "=", canonicalAddress(req.address)) : q.where("path", "=", normalPath(req.path!));
    // A path with several address formats has several accounts: the first created is returned.
    const row = await q.orderBy("created_at").orderBy("id").limit(1).executeTakeFirst();
    if (!row) {
      const what = req.address !== undefined ? `address ${req.address}` : `path ${req.path}`;
      throw notFound(`no account with ${what} in wallet ${req.walletId}`);
    }
    return { account: walletAccountView(row) };
  },
});

export const listWalletAccounts = defineQuery({
  op: "list_wallet_accounts",
  summary: "List wallet accounts (of one wallet, or of the whole organization), in creation order, with cursor pagination.",
  request: Type.Object({
    organizationId: OrganizationId,
    walletId: Type.Optional(Id("wallet")),
    includeWalletDetails: Type.Optional(Type.Boolean()),
    paginationOptions: Type.Optional(Pagination),
  }),
  response: Type.Object({ accounts: Type.Array(WalletAccountSchema) }),
  async run({ db, organization }, req) {
    const pageReq = pageRequest(req.paginationOptions);
    if (req.walletId !== undefined && !(await findWallet(db, organization.id, req.walletId))) {
      throw notFound(`no wallet ${req.walletId} in organization ${organization.id}`);
    }
    let base = db.selectFrom("wallet_accounts").selectAll().where("organization_id", "=", organization.id);
    if (req.walletId !== undefined) base = base.where("wallet_id", "=", req.walletId);
    const cursorId = pageReq.before ?? pageReq.after;
    let cursor: { created_at: number; id: string } | undefined;
    if (cursorId !== undefined) {
      cursor = await base.clearSelect().select(["created_at", "id"]).where("id", "=", cursorId).executeTakeFirst();
      if (!cursor) unknownCursor(cursorId);
    }
    const rows = await page(base, pageReq, cursor, false);
    let wallets: Map<string, WalletRow> | undefined;
    if (req.includeWalletDetails && rows.length) {
      const ids = [...new Set(rows.map((r) => r.wallet_id))];
      wallets = new Map((await db.selectFrom("wallets").selectAll().where("id", "in", ids).execute()).map((w) => [w.id, w]));
    }
    return { accounts: rows.map((r) => walletAccountView(r, wallets?.get(r.wallet_id))) };
  },
});

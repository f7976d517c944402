import { it } from "node:test";
import assert from "node:assert/strict";
import { invalidRequest, notFound, perEngine } from "../helpers/inproc.ts";
import { newApp, TVC } from "../helpers/tvc.ts";

const OP = "get_tvc_app";

perEngine(
  OP,
  (h) => {
    it("by tvcAppId through the official SDK (getTvcApp): the same record list_tvc_apps gives", async () => {
      const org = await h().newOrg("tvc-get");
      const app = await newApp(h(), org);
      const sdk = await h().sdk(org);
      const { tvcApp } = await sdk.getTvcApp({ tvcAppId: app.appId });
      assert.equal(tvcApp.id, app.appId);
      assert.deepEqual(
        tvcApp.manifestSet.operators.map((o) => o.id),
        app.manifestSetOperatorIds,
      );
      const listed = (await h().query("list_tvc_apps", {}, { as: org })).json.tvcApps[0];
      assert.deepEqual(tvcApp, listed);
    });

    it("an unknown or foreign app is 404; appId instead of tvcAppId is 400 naming tvcAppId", async () => {
      const org = await h().newOrg("tvc-get-missing");
      const foreign = await newApp(h(), await h().newOrg("tvc-get-foreign"));
      notFound(await h().query(OP, { tvcAppId: crypto.randomUUID() }, { as: org }), /no TVC app/);
      notFound(await h().query(OP, { tvcAppId: foreign.appId }, { as: org }), /no TVC app/);
      invalidRequest(await h().query(OP, { appId: foreign.appId }, { as: org }), /tvcAppId/, ["tvcAppId"]);
      invalidRequest(await h().query(OP, { tvcAppId: "nope" }, { as: org }), /UUID/, ["tvcAppId"]);
    });
  },
  undefined,
  TVC,
);

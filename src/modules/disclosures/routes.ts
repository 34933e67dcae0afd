import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { contentDisposition } from "../../http/downloads";
import { pageOf } from "../../http/pagination";
import { idParam, responseContent, responseHeaders } from "../../http/schemas";
import { disclosureSchema } from "../audit/schema";
import { listDisclosuresQuery } from "./schema";
import { disclosuresCsv, listDisclosures } from "./service";

export function disclosuresRoutes(deps: Deps) {
  const { db } = deps;
  return new Elysia({ name: "parley.disclosures", detail: { tags: ["End users"] } }).use(authentication(deps)).get(
    "/end-users/:id/disclosures",
    ({ principal, params, query }) => {
      const caller = authorize(principal, "disclosures:read");
      if (query.format === "json") return listDisclosures(db, caller, params.id, { limit: query.limit, cursor: query.cursor });
      return new Response(disclosuresCsv(db, caller, params.id), {
        headers: { "content-type": "text/csv; charset=utf-8", "content-disposition": contentDisposition(`disclosures-${params.id}.csv`) },
      });
    },
    {
      params: idParam,
      query: listDisclosuresQuery,
      response: { 200: pageOf(disclosureSchema) },
      detail: {
        summary: "List an end user's disclosures",
        description:
          "Scope disclosures:read. The accounting of disclosures (HIPAA 164.528): every read or export of this end user's recordings, transcripts, summaries, search results and Ask context, newest first, with the key or person, the credential, and the reason (a break-glass reason, an export's matter). An end-user-scoped key sees only its own end user's. A deleted end user's accounting stays. format=csv answers every disclosure as a CSV attachment instead of a page.",
        ...responseHeaders({ 200: ["Content-Disposition"] }),
        ...responseContent({ 200: { "text/csv": { schema: { type: "string", description: "format=csv: every disclosure, a header row first" } } } }),
      },
    },
  );
}

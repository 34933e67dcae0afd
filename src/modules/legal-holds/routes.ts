import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { pageOf } from "../../http/pagination";
import { idParam } from "../../http/schemas";
import { createLegalHoldBody, legalHoldSchema, listLegalHoldsQuery } from "./schema";
import { createLegalHold, getLegalHold, listLegalHolds, releaseLegalHold } from "./service";

export function legalHoldsRoutes(deps: Deps) {
  const { db } = deps;
  return new Elysia({ name: "parley.legal-holds", detail: { tags: ["Legal holds"] } })
    .use(authentication(deps))
    .post(
      "/legal-holds",
      ({ principal, body, set }) => {
        const hold = createLegalHold(deps, authorize(principal, "legal_holds:write"), body);
        set.status = 201;
        return hold;
      },
      {
        body: createLegalHoldBody,
        response: { 201: legalHoldSchema },
        detail: {
          summary: "Place a legal hold",
          description:
            "Scope legal_holds:write; not for end-user-scoped keys. Names a matter and exactly one of end_user_id, device_id or recording_id (422 otherwise). While active, DELETE of a covered recording, or of the end user or device, is 409 legal_hold_active, and retention skips the recordings it covers. Audited.",
        },
      },
    )
    .get("/legal-holds", ({ principal, query }) => listLegalHolds(db, authorize(principal, "legal_holds:read"), query), {
      query: listLegalHoldsQuery,
      response: { 200: pageOf(legalHoldSchema) },
      detail: { summary: "List legal holds", description: "Scope legal_holds:read. List envelope, newest first; status filters active or released holds." },
    })
    .get("/legal-holds/:id", ({ principal, params }) => getLegalHold(db, authorize(principal, "legal_holds:read"), params.id), {
      params: idParam,
      response: { 200: legalHoldSchema },
      detail: { summary: "Get a legal hold", description: "Scope legal_holds:read." },
    })
    .post("/legal-holds/:id/release", ({ principal, params }) => releaseLegalHold(deps, authorize(principal, "legal_holds:write"), params.id), {
      params: idParam,
      response: { 200: legalHoldSchema },
      detail: {
        summary: "Release a legal hold",
        description: "Scope legal_holds:write. The hold stays on record as released; 409 resource_conflict when already released. Audited.",
      },
    });
}

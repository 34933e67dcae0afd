import { Elysia } from "elysia";
import { newId } from "../ids";

/**
 * Gives every request a `req_` id, returned in the `Request-Id` header and in error
 * bodies, so a client's report can be matched to the server log.
 */
export const requestId = new Elysia({ name: "parley.request-id" })
  .state("requestId", "")
  .onRequest(({ set, store }) => {
    store.requestId = newId("req_");
    set.headers["request-id"] = store.requestId;
  })
  .as("global");

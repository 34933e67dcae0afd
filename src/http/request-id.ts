import { newSecret } from "../ids";

/** The response header that carries a request's id; `set` is per request, so it is also where the id is read back. */
export const REQUEST_ID_HEADER = "request-id";

/** The id of the request whose `set` this is (error bodies, logs, stored idempotent errors). */
export function requestIdOf(set: { headers: Record<string, unknown> }): string | undefined {
  return set.headers[REQUEST_ID_HEADER] as string | undefined;
}

// Request ids need to be unique, not secret or sortable: a random part drawn once per
// process (12 characters, ~70 bits, so two processes or restarts never share it) and a
// counter. Minting one is a string concatenation rather than a random draw on every
// request (decision 008).
const processPart = `req_${newSecret("").slice(0, 12)}`;
let counter = 0;

/**
 * Gives a request its `req_` id, returned in the `Request-Id` header and in error bodies,
 * so a client's report can be matched to the server log. Called first by beforeRouting.
 */
export function stampRequestId(headers: Record<string, unknown>): void {
  headers[REQUEST_ID_HEADER] = processPart + (counter++).toString(36);
}

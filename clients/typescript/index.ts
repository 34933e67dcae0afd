// Parley's typed TypeScript client: openapi-fetch over the types generated from the OpenAPI
// document (schema.d.ts, by `bun scripts/client.ts`). Every path, parameter, body and
// response is typed, audio bytes and Range reads included; nothing here is cast.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

export type { components, operations, paths } from "./schema";
/** The API's named objects: Schemas["Recording"], Schemas["SearchResult"], ... */
export type Schemas = components["schemas"];

/** A client acting with one API key against one appliance, e.g. https://parley.example. */
export function createParleyClient(options: { baseUrl: string; key: string; fetch?: typeof globalThis.fetch }) {
  return createClient<paths>({ baseUrl: options.baseUrl, fetch: options.fetch, headers: { authorization: `Bearer ${options.key}` } });
}
export type ParleyClient = ReturnType<typeof createParleyClient>;

/** What the rate limiter said about a response (spec 8); null when limits are off and it said nothing. */
export type RateLimit = { limit: number; remaining: number; resetsAt: Date };

/** The X-RateLimit-* headers every API response carries, read as numbers. */
export function rateLimitOf(response: Response): RateLimit | null {
  const limit = response.headers.get("x-ratelimit-limit");
  const remaining = response.headers.get("x-ratelimit-remaining");
  const reset = response.headers.get("x-ratelimit-reset");
  if (limit === null || remaining === null || reset === null) return null;
  return { limit: Number(limit), remaining: Number(remaining), resetsAt: new Date(Number(reset) * 1000) };
}

import { z } from "zod";

/** Free key-value metadata (spec 2.2): at most 50 keys of up to 40 characters, 16 KB in all. */
export const metadataSchema = z
  .record(z.string().min(1).max(40), z.unknown())
  .refine((m) => Object.keys(m).length <= 50, "metadata holds at most 50 keys")
  .refine((m) => JSON.stringify(m).length <= 16_384, "metadata is at most 16 KB as JSON");

/** A path id of the given prefix; anything else is simply not found, so the shape is checked in the store. */
export const idParam = z.object({ id: z.string().min(1).max(100) });

export const isoDateTime = z.iso.datetime({ offset: true });

/** Free key-value metadata as a response carries it (what metadataSchema accepted). */
export const metadataOut = z.record(z.string(), z.unknown());

/** Why a job or command failed: {code, message} (spec 2.6, 2.8). */
export const failureSchema = z.object({ code: z.string(), message: z.string() });

/** When a background job's record was created, started and ended (transcriptions, summaries; spec 2.8). */
export const jobTimestamps = {
  created_at: isoDateTime,
  started_at: isoDateTime.nullable(),
  completed_at: isoDateTime.nullable(),
  failed_at: isoDateTime.nullable(),
};

/** A 204: no body. openapi.ts declares it without content. */
export const noContent = { 204: z.undefined() };

/** Bytes in the media types given; `format: binary` is what client generators turn into a Blob. */
const bytesIn = (types: string[]) => Object.fromEntries(types.map((type) => [type, { schema: { type: "string" as const, format: "binary" } }]));

/** A raw request body (audio, firmware image) in the media types a client may send: documented only, the route streams it unparsed. */
export const binaryRequestBody = (description: string, types = ["application/octet-stream"]) => ({ required: true, description, content: bytesIn(types) });

/**
 * A file response (audio, firmware image, an archive): bytes, not JSON, so documented rather
 * than validated. `headers` names components.headers (src/http/openapi.ts) this response
 * sends besides the ones every response carries.
 */
export const binaryResponse = (description: string, types = ["application/octet-stream"], headers: string[] = []) => ({
  description,
  content: bytesIn(types),
  ...(headers.length ? { headers: Object.fromEntries(headers.map((name) => [name, { $ref: `#/components/headers/${name}` }])) } : {}),
});

/**
 * Headers a JSON response sends besides the ones every response carries, by status, for a
 * route's `detail` (the generator builds those responses from zod; openapi.ts adds these).
 */
export const responseHeaders = (byStatus: Record<number, string[]>) => ({ "x-response-headers": byStatus });

/** Media types a response may also come in besides the JSON of `response` (the same list as CSV), by status, for a route's `detail`. */
export const responseContent = (byStatus: Record<number, Record<string, { schema: object }>>) => ({ "x-response-content": byStatus });

/** Request headers an operation reads, by their names in components.parameters (the generator drops a `detail`'s own parameters). */
export const headerParameters = (names: string[]) => ({ "x-header-parameters": names });

import { Elysia } from "elysia";
import { ApiError } from "./errors";

/** No JSON body of this API comes near this; audio goes through the upload URL instead. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;
/** Deep enough for any metadata a client means to store; deeper input would exhaust the validator's stack. */
export const MAX_JSON_DEPTH = 32;

/** Deepest nesting of arrays and objects in JSON text, counted without recursion. */
function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) max = Math.max(max, ++depth);
    else if (c === 125 || c === 93) depth--;
  }
  return max;
}

/** application/json or a structured-syntax +json type (RFC 6839), parameters aside; application/jsonx and friends are not JSON. */
export function isJsonType(contentType: string | undefined): boolean {
  const type = contentType?.split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/json" || /^application\/[a-z0-9!#$&^_.-]+\+json$/.test(type);
}

async function readCapped(request: Request): Promise<string> {
  const declared = Number(request.headers.get("content-length") ?? 0);
  const tooLarge = () => new ApiError("payload_too_large", `A JSON request body may be at most ${MAX_JSON_BODY_BYTES} bytes.`);
  if (declared > MAX_JSON_BODY_BYTES) throw tooLarge();
  if (request.headers.has("content-length") || !request.body) return request.text();
  // Chunked bodies declare no length: count while reading and stop at the cap.
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_JSON_BODY_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/**
 * Parses request bodies ourselves: JSON only (the API speaks nothing else), an empty body
 * counts as `{}` (POST /unbind and friends have nothing to send), malformed JSON is a 400
 * in our error body, and size and nesting are bounded before any validator sees the input.
 */
export const jsonBody = new Elysia({ name: "parley.json-body" })
  .onParse(async ({ request, contentType }) => {
    const text = await readCapped(request);
    if (text.trim() === "") return {};
    if (!isJsonType(contentType)) {
      throw new ApiError("invalid_request", "Request bodies must be JSON, sent with Content-Type: application/json.");
    }
    if (nestingDepth(text) > MAX_JSON_DEPTH) throw new ApiError("invalid_request", `JSON nested deeper than ${MAX_JSON_DEPTH} levels is not accepted.`);
    try {
      return JSON.parse(text);
    } catch {
      throw new ApiError("invalid_request", "The request body is not valid JSON.");
    }
  })
  .as("global");

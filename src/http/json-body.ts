import { Elysia } from "elysia";
import { ApiError } from "./errors";

/**
 * Parses JSON bodies ourselves so that an empty body counts as `{}` (POST /unbind and
 * friends have nothing to send) and malformed JSON is a 400 in our error body.
 */
export const jsonBody = new Elysia({ name: "parley.json-body" })
  .onParse(async ({ request, contentType }) => {
    if (!contentType?.startsWith("application/json")) return;
    const text = await request.text();
    if (text.trim() === "") return {};
    try {
      return JSON.parse(text);
    } catch {
      throw new ApiError("invalid_request", "The request body is not valid JSON.");
    }
  })
  .as("global");

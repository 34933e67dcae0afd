import { toOpenAPISchema } from "@elysiajs/openapi";
import type { AnyElysia } from "elysia";
import { z } from "zod";
import { CURRENT_VERSION } from "./versioning";

const zodToJsonSchema = (schema: z.ZodType) => z.toJSONSchema(schema, { unrepresentable: "any", io: "input" });

type Operation = { requestBody?: { content?: Record<string, unknown> } } & Record<string, unknown>;

/**
 * OpenAPI 3.1 generated from the routes' zod schemas (served at /v1/openapi.json and
 * written to docs/api/openapi.json by `bun scripts/openapi.ts`). Pass the bare route
 * tree: the app's own body parser would hide the request bodies from the generator.
 * Bodies are JSON only, so the form encodings the generator adds are dropped.
 */
export function buildOpenApiDocument(app: AnyElysia) {
  const { paths, components } = toOpenAPISchema(app, undefined, undefined, { zod: zodToJsonSchema });
  for (const item of Object.values(paths ?? {}) as Record<string, Operation>[]) {
    for (const op of Object.values(item)) {
      const content = op?.requestBody?.content;
      if (content) for (const type of Object.keys(content)) if (type !== "application/json") delete content[type];
    }
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Parley API",
      version: CURRENT_VERSION,
      description:
        "Self-hosted conversation capture. Authenticate with `Authorization: Bearer <key>`. Errors are `{error: {code, message, param?, request_id}}`. See docs/api.md for scopes and conventions.",
    },
    servers: [{ url: "/" }],
    components: { ...components, securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    security: [{ bearer: [] }],
    paths,
  };
}

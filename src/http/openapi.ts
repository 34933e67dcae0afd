import { toOpenAPISchema } from "@elysiajs/openapi";
import type { AnyElysia } from "elysia";
import { z } from "zod";
import { CURRENT_VERSION } from "./versioning";

const zodToJsonSchema = (schema: z.ZodType) => z.toJSONSchema(schema, { unrepresentable: "any", io: "input" });

type Operation = {
  requestBody?: { content?: Record<string, unknown> };
  parameters?: unknown[];
  responses?: Record<string, unknown>;
} & Record<string, unknown>;

const ref = (kind: "schemas" | "parameters" | "responses", name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** What every operation shares: the error body of spec 7, the version and idempotency headers. */
const sharedComponents = {
  schemas: {
    Error: {
      type: "object",
      required: ["error"],
      properties: {
        error: {
          type: "object",
          required: ["code", "message"],
          properties: { code: { type: "string" }, message: { type: "string" }, param: { type: "string" }, request_id: { type: "string" } },
        },
      },
    },
  },
  parameters: {
    ParleyVersion: { name: "Parley-Version", in: "header", required: false, schema: { type: "string", enum: [CURRENT_VERSION] }, description: "API version date; without it the latest applies." },
    IdempotencyKey: {
      name: "Idempotency-Key",
      in: "header",
      required: false,
      schema: { type: "string", pattern: "^[A-Za-z0-9_-]{1,255}$" },
      description: "Honoured by the create and trigger endpoints (docs/api.md lists them): the same key and payload replay the first response for 24 hours.",
    },
  },
  responses: {
    Error: { description: "Error (docs/api.md lists the codes and statuses)", content: { "application/json": { schema: ref("schemas", "Error") } } },
  },
};

/**
 * OpenAPI 3.1 generated from the routes' zod schemas (served at /v1/openapi.json and
 * written to docs/api/openapi.json by `bun scripts/openapi.ts`). Pass the bare route
 * tree: the app's own body parser would hide the request bodies from the generator.
 * Bodies are JSON only, so the form encodings the generator adds are dropped.
 */
export function buildOpenApiDocument(app: AnyElysia) {
  const { paths, components } = toOpenAPISchema(app, undefined, undefined, { zod: zodToJsonSchema });
  for (const item of Object.values(paths ?? {}) as Record<string, Operation>[]) {
    for (const [method, op] of Object.entries(item)) {
      const content = op?.requestBody?.content;
      if (content) for (const type of Object.keys(content)) if (type !== "application/json") delete content[type];
      op.parameters = [...(op.parameters ?? []), ref("parameters", "ParleyVersion"), ...(method === "post" ? [ref("parameters", "IdempotencyKey")] : [])];
      op.responses = { ...op.responses, "4XX": ref("responses", "Error"), "5XX": ref("responses", "Error") };
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
    components: { ...components, ...sharedComponents, schemas: { ...components?.schemas, ...sharedComponents.schemas }, securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    security: [{ bearer: [] }],
    paths,
  };
}

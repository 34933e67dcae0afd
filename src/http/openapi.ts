import { toOpenAPISchema } from "@elysiajs/openapi";
import type { AnyElysia } from "elysia";
import { z } from "zod";
import { CURRENT_VERSION } from "./versioning";

/** zod bounds every .int() by the safe-integer range; said on every count and size, it is only noise. */
const dropSafeIntegerBounds = ({ jsonSchema }: { jsonSchema: { minimum?: number; maximum?: number } }) => {
  if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
  if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
};

const zodToJsonSchema = (schema: z.ZodType) => z.toJSONSchema(schema, { unrepresentable: "any", io: "input", override: dropSafeIntegerBounds });

/** What each success status means here; the generator would say "Response for status 200". */
const SUCCESS_DESCRIPTIONS: Record<string, string> = {
  "200": "OK",
  "201": "Created",
  "202": "Accepted: the work goes on in the background; poll the resource or wait for its events",
  "204": "No content",
};

type Operation = {
  requestBody?: { required?: boolean; content?: Record<string, unknown> };
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

/** The generator offers every JSON body in these encodings too; the API reads JSON only. */
const FORM_ENCODINGS = ["application/x-www-form-urlencoded", "multipart/form-data"];

/**
 * The project has chosen no public licence (package.json is private), so the document
 * says "all rights reserved" in SPDX's own terms. Change it with package.json when one is chosen.
 */
const LICENSE = { name: "Proprietary", identifier: "LicenseRef-Proprietary" };

type JsonNode = { [key: string]: unknown };

/** Calls `visit` on every object below `node`, children first. */
function eachObject(node: unknown, visit: (object: JsonNode) => void): void {
  if (typeof node !== "object" || node === null) return;
  for (const child of Object.values(node)) eachObject(child, visit);
  visit(node as JsonNode);
}

/**
 * zod converts each schema on its own, with the named ones (`.meta({ id })`: Device,
 * Recording, ...) under its own `$defs`. They move to components.schemas, where every
 * operation shares one copy, and the references follow.
 */
function hoistNamedSchemas(paths: unknown, into: Record<string, unknown>): void {
  eachObject(paths, (schema) => {
    if (typeof schema.$ref === "string" && schema.$ref.startsWith("#/$defs/")) schema.$ref = `#/components/schemas/${schema.$ref.slice(8)}`;
    if (schema.$defs && typeof schema.$defs === "object") {
      Object.assign(into, schema.$defs);
      delete schema.$defs;
    }
    delete schema.$schema;
  });
}

/**
 * The generator folds zod's `anyOf: [{enum}, {type: null}]` into `type: [..., "null"]` but
 * keeps the enum (or const) without null, which then refuses the null it means to allow.
 */
function allowNullInEnums(paths: unknown): void {
  eachObject(paths, (schema) => {
    if (!Array.isArray(schema.type) || !schema.type.includes("null")) return;
    if ("const" in schema) {
      schema.enum = [schema.const];
      delete schema.const;
    }
    if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum.push(null);
  });
}

/** "post /v1/devices/{id}/wifi-config/grant" for each route whose body may be left out: the generator marks every body required. */
function optionalBodies(app: AnyElysia): Set<string> {
  const accepts = (schema: unknown, value: unknown) => {
    const standard = (schema as { "~standard"?: { validate(v: unknown): unknown } } | undefined)?.["~standard"];
    const result = standard?.validate(value) as { issues?: unknown } | undefined;
    return result !== undefined && !(result instanceof Promise) && !result.issues;
  };
  return new Set(
    app.routes
      .filter((route) => accepts(route.hooks.body, undefined))
      .map((route) => `${route.method.toLowerCase()} ${route.path.replace(/:([^/]+)/g, "{$1}")}`),
  );
}

/**
 * OpenAPI 3.1 generated from the routes' zod schemas (served at /v1/openapi.json and
 * written to docs/api/openapi.json by `bun scripts/openapi.ts`): request schemas from
 * `body`/`query`/`params`, success responses from `response` (decision 006). Pass the
 * bare route tree: the app's own body parser would hide the request bodies from the
 * generator. Raw bodies, file responses and `security: []` come from a route's `detail`.
 */
export function buildOpenApiDocument(app: AnyElysia) {
  const { paths } = toOpenAPISchema(app, undefined, undefined, { zod: zodToJsonSchema });
  const schemas: Record<string, unknown> = {};
  const bodyOptional = optionalBodies(app);
  for (const [path, item] of Object.entries(paths ?? {}) as [string, Record<string, Operation>][]) {
    for (const [method, op] of Object.entries(item)) {
      const content = op?.requestBody?.content;
      if (content) for (const type of FORM_ENCODINGS) delete content[type];
      if (op.requestBody && bodyOptional.has(`${method} ${path}`)) op.requestBody.required = false;
      for (const [status, response] of Object.entries(op.responses ?? {}) as [string, { description?: string; content?: unknown }][]) {
        if (!response.description?.startsWith("Response for status")) continue;
        response.description = SUCCESS_DESCRIPTIONS[status] ?? response.description;
        if (status === "204") delete response.content;
      }
      op.parameters = [...(op.parameters ?? []), ref("parameters", "ParleyVersion"), ...(method === "post" ? [ref("parameters", "IdempotencyKey")] : [])];
      op.responses = { ...op.responses, "4XX": ref("responses", "Error"), "5XX": ref("responses", "Error") };
    }
  }
  allowNullInEnums(paths);
  hoistNamedSchemas(paths, schemas);
  return {
    openapi: "3.1.0",
    info: {
      title: "Parley API",
      version: CURRENT_VERSION,
      license: LICENSE,
      description:
        "Self-hosted conversation capture. Authenticate with `Authorization: Bearer <key>`. Errors are `{error: {code, message, param?, request_id}}`. See docs/api.md for scopes and conventions.",
    },
    servers: [{ url: "/" }],
    components: { ...sharedComponents, schemas: { ...schemas, ...sharedComponents.schemas }, securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    security: [{ bearer: [] }],
    paths,
  };
}

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

const ref = (kind: "schemas" | "parameters" | "responses" | "headers", name: string) => ({ $ref: `#/components/${kind}/${name}` });

const integer = { type: "integer" } as const;
const text = { type: "string" } as const;

/**
 * The response headers Parley sends, by their names. Every response carries Request-Id and
 * (with rate limits on) X-RateLimit-*; errors may carry Retry-After; the others are declared
 * by the operations that send them (a route's `detail`, see http/schemas.ts).
 */
const HEADERS: Record<string, { description: string; schema: object }> = {
  "Request-Id": { description: "This request's id (req_...), also in an error's body: quote it when reporting a problem.", schema: text },
  "X-RateLimit-Limit": { description: "Requests allowed per window for this credential (spec 8); absent when rate limits are off.", schema: integer },
  "X-RateLimit-Remaining": { description: "Requests left in the current window.", schema: integer },
  "X-RateLimit-Reset": { description: "When the current window ends, in Unix seconds.", schema: integer },
  "Retry-After": {
    description: "Seconds to wait before retrying: 429 rate_limited or too_many_uploads, 425 upload_verification_pending, 503, 507.",
    schema: integer,
  },
  "Idempotent-Replayed": {
    description: "`true` when this is the stored answer to an earlier request with the same Idempotency-Key.",
    schema: { type: "string", enum: ["true"] },
  },
  "Content-Range": { description: "The bytes sent, `bytes START-END/SIZE` (206, and a whole file's 200), or the size, `bytes */SIZE` (416).", schema: text },
  "Accept-Ranges": { description: "`bytes`: a Range header is honoured.", schema: { type: "string", enum: ["bytes"] } },
  ETag: { description: "The stored file's SHA-256, quoted.", schema: text },
  "X-Firmware-SHA256": { description: "The firmware image's SHA-256, hex: check it before flashing.", schema: text },
  "X-Firmware-Version": { description: "The firmware image's version.", schema: text },
  "Content-Disposition": {
    description: "`attachment` with the file name to save it under: stored bytes are never shown as a page (decision 113).",
    schema: text,
  },
  "Parley-Redaction": { description: "With redacted=true: the passes applied, `rules; model=completed|failed|not_run` (decision 111).", schema: text },
};

const headerRefs = (names: string[]) => Object.fromEntries(names.map((name) => [name, ref("headers", name)]));
const EVERY_RESPONSE = ["Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"];

/** What each tag holds, in the order a reader meets them (the top-level `tags` list). */
const TAGS: [string, string][] = [
  ["End users", "The people whose conversations are captured; every recording, device binding and search belongs to one."],
  ["Devices", "Wearables: registration, binding to an end user, heartbeats, live state and settings."],
  ["Device commands", "Commands sent to a device (start, stop, trigger upload) and their lifecycle."],
  ["Device grants", "Short-lived signed grants a device presents (WiFi configuration)."],
  ["Firmware and OTA", "Firmware releases and their over-the-air assignment to devices."],
  ["Recordings", "Recording entries, audio upload through pre-signed URLs, verification and download."],
  ["Transcriptions", "Speech to text with speakers, and the redacted view."],
  ["Summaries", "Summaries of transcriptions by template."],
  ["Search", "Hybrid semantic and keyword search over an end user's transcripts."],
  ["Ask", "Questions answered from transcripts, with citations."],
  ["Voices", "Known voices: speaker names learnt from samples."],
  ["Webhooks", "Endpoints that receive events, and their deliveries."],
  ["Configuration", "Project, end-user and device configuration levels."],
  ["Legal holds", "Holds that stop deletion and retention for what they cover."],
  ["Audit", "The hash-chained log of reads and changes."],
  ["Exports", "eDiscovery archives of an end user's or chosen recordings."],
  ["Operations", "Health and metrics, without a key."],
];

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
    ParleyVersion: {
      name: "Parley-Version",
      in: "header",
      required: false,
      schema: { type: "string", enum: [CURRENT_VERSION] },
      description: "API version date; without it the latest applies.",
    },
    IdempotencyKey: {
      name: "Idempotency-Key",
      in: "header",
      required: false,
      schema: { type: "string", pattern: "^[A-Za-z0-9_-]{1,255}$" },
      description: "Honoured by the create and trigger endpoints (docs/api.md lists them): the same key and payload replay the first response for 24 hours.",
    },
    Range: {
      name: "Range",
      in: "header",
      required: false,
      schema: { type: "string", pattern: "^bytes=(\\d+-\\d*|-\\d+)$" },
      description: "One byte range, e.g. `bytes=0-1023`, `bytes=1024-` or `bytes=-500`: answered 206 with Content-Range, or 416 when it lies past the end.",
    },
  },
  responses: {
    Error: {
      description: "Error (docs/api.md lists the codes and statuses)",
      // A stored 4xx is replayed too (idempotency never stores 425, 429 or 5xx).
      headers: headerRefs([...EVERY_RESPONSE, "Retry-After", "Idempotent-Replayed"]),
      content: { "application/json": { schema: ref("schemas", "Error") } },
    },
  },
  headers: HEADERS,
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
      const extraHeaders = (op["x-response-headers"] ?? {}) as Record<string, string[]>;
      const headerParameters = ((op["x-header-parameters"] ?? []) as string[]).map((name) => ref("parameters", name));
      const extraContent = (op["x-response-content"] ?? {}) as Record<string, object>;
      delete op["x-response-content"];
      delete op["x-response-headers"];
      delete op["x-header-parameters"];
      for (const [status, response] of Object.entries(op.responses ?? {}) as [string, { description?: string; content?: unknown; headers?: object }][]) {
        const replayable = method === "post" ? ["Idempotent-Replayed"] : [];
        response.headers = { ...headerRefs([...EVERY_RESPONSE, ...replayable, ...(extraHeaders[status] ?? [])]), ...response.headers };
        if (extraContent[status]) response.content = { ...(response.content as object), ...extraContent[status] };
        if (!response.description?.startsWith("Response for status")) continue;
        response.description = SUCCESS_DESCRIPTIONS[status] ?? response.description;
        if (status === "204") delete response.content;
      }
      op.parameters = [
        ...(op.parameters ?? []),
        ...headerParameters,
        ref("parameters", "ParleyVersion"),
        ...(method === "post" ? [ref("parameters", "IdempotencyKey")] : []),
      ];
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
    tags: TAGS.map(([name, description]) => ({ name, description })),
    paths,
  };
}

import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { documentedRoutes } from "../../src/app";
import type { Deps } from "../../src/deps";
import { buildOpenApiDocument } from "../../src/http/openapi";

type ResponseObject = { description: string; content?: Record<string, { schema: unknown }> } | { $ref: string };
type Operation = { responses: Record<string, ResponseObject> };
type Document = { paths: Record<string, Record<string, Operation>>; components: { headers: Record<string, unknown> } };

/** One operation of the document: its key ("get /v1/devices/{id}"), its JSON pointer and what it declares. */
export type DocumentedOperation = { key: string; pointer: string; operation: Operation };

/** A reply as test/helpers.ts parses it: JSON bodies parsed, an empty body as null. */
export type ContractReply = { status: number; body: unknown; headers: Headers };

const DOCUMENT_ID = "parley-openapi.json";

/**
 * The OpenAPI document the code generates, and Ajv (JSON Schema 2020-12, the dialect of
 * OpenAPI 3.1) holding it whole, so a response schema is compiled by its JSON pointer and
 * its $refs to components resolve as they would for a client generated from the document.
 */
export class OpenApiContract {
  readonly document: Document;
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: { method: string; path: string; pattern: RegExp; params: number }[];

  constructor(document: object) {
    this.document = document as Document;
    addFormats(this.ajv);
    this.ajv.addSchema(document, DOCUMENT_ID);
    this.templates = Object.entries(this.document.paths)
      .flatMap(([path, item]) => Object.keys(item).map((method) => ({ method, path, pattern: templatePattern(path), params: path.split("{").length - 1 })))
      // A literal segment wins over a parameter: POST /v1/recordings/search is not /v1/recordings/{id}.
      .sort((a, b) => a.params - b.params);
  }

  /** Every operation key the document holds. */
  operationKeys(): string[] {
    return this.templates.map((t) => `${t.method} ${t.path}`).sort();
  }

  /** The operation a request reaches, or null for what the document does not describe (/healthz, unknown URLs). */
  operationFor(method: string, url: string): DocumentedOperation | null {
    const path = new URL(url, "http://localhost").pathname;
    const found = this.templates.find((t) => t.method === method.toLowerCase() && t.pattern.test(path));
    if (!found) return null;
    return {
      key: `${found.method} ${found.path}`,
      pointer: `/paths/${escape(found.path)}/${found.method}`,
      operation: this.document.paths[found.path]?.[found.method] as Operation,
    };
  }

  /**
   * What is wrong with a reply by the document, or null when it conforms: a success status
   * the operation does not declare, a body the declared one has none for, or a JSON body
   * its schema refuses. Errors are checked against the 4XX/5XX Error response.
   */
  violation(op: DocumentedOperation, reply: ContractReply): string | null {
    const { responses } = op.operation;
    const status = String(reply.status);
    const declaredAs = status in responses ? status : reply.status >= 400 ? `${status[0]}XX` : null;
    if (!declaredAs || !responses[declaredAs])
      return `${op.key} answered ${status}, which it does not declare (declared: ${Object.keys(responses).join(", ")})`;
    const pointer = this.resolve(`${op.pointer}/responses/${declaredAs}`);
    const response = resolvePointer(this.document, pointer) as ResponseObject & { content?: Record<string, unknown>; headers?: Record<string, unknown> };
    // Parley's own headers (components.headers) a response sends must be declared on it, so a generated client knows them.
    const undeclared = Object.keys(this.document.components.headers).filter((name) => reply.headers.has(name) && !(name in (response.headers ?? {})));
    if (undeclared.length) return `${op.key} ${status} sends ${undeclared.join(", ")} without declaring it`;
    if (!response.content) return reply.body === null ? null : `${op.key} ${status} declares no body but sent ${JSON.stringify(reply.body).slice(0, 200)}`;
    const type = reply.headers.get("content-type")?.split(";")[0]!.trim().toLowerCase();
    const declaredTypes = Object.keys(response.content).map((t) => t.split(";")[0]!.trim());
    if (type && !declaredTypes.some((t) => t === type || (t.endsWith("/*") && type.startsWith(t.slice(0, -1)))))
      return `${op.key} ${status} answered ${type}, declared ${declaredTypes.join(", ")}`;
    // Only a JSON body has a schema to check (a list may also come as CSV).
    if (!("application/json" in response.content) || (type && type !== "application/json")) return null;
    const validate = this.validator(`${pointer}/content/application~1json/schema`);
    if (validate(reply.body)) return null;
    return `${op.key} ${status}: ${this.ajv.errorsText(validate.errors, { dataVar: "body" })}\n${JSON.stringify(reply.body).slice(0, 500)}`;
  }

  /** Whether the operation's JSON request body schema accepts `body`, as a client generated from the document would judge it. */
  acceptsRequestBody(method: string, url: string, body: unknown): boolean {
    const op = this.operationFor(method, url);
    if (!op) throw new Error(`the document has no ${method} ${url}`);
    return this.validator(`${op.pointer}/requestBody/content/application~1json/schema`)(body) === true;
  }

  /** A response given as a $ref (the shared Error) is followed to its component. */
  private resolve(pointer: string): string {
    const node = resolvePointer(this.document, pointer) as { $ref?: string };
    return node.$ref ? node.$ref.slice(1) : pointer;
  }

  private validator(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }
}

const escape = (segment: string) => segment.replace(/~/g, "~0").replace(/\//g, "~1");

function resolvePointer(root: unknown, pointer: string): unknown {
  return pointer
    .split("/")
    .slice(1)
    .reduce<unknown>((node, segment) => (node as Record<string, unknown>)[segment.replace(/~1/g, "/").replace(/~0/g, "~")], root);
}

function templatePattern(path: string): RegExp {
  return new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}$`);
}

let shared: OpenApiContract | undefined;

/** The contract of the code under test; built once, since the document does not depend on the data. */
export function openApiContract(deps: Deps): OpenApiContract {
  shared ??= new OpenApiContract(buildOpenApiDocument(documentedRoutes(deps)));
  return shared;
}

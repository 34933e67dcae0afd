import { Elysia } from "elysia";
import type { Logger } from "../log";
import { isOutOfSpace, type Volume, volumeOf } from "../storage/volumes";
import { requestIdOf } from "./request-id";

/** Every error code the API answers with, and its HTTP status. One table: no status is chosen elsewhere. */
export const ERROR_STATUS = {
  bad_request: 400,
  invalid_request: 400,
  unsupported_version: 400,
  device_not_wifi_capable: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  resource_not_found: 404,
  resource_already_exists: 409,
  resource_conflict: 409,
  idempotency_key_conflict: 409,
  device_command_rejected: 409,
  upload_integrity_failed: 409,
  encrypted_upload_v2_staging_missing: 409,
  transcription_not_ready: 409,
  legal_hold_active: 409,
  request_timeout: 408,
  payload_too_large: 413,
  transcript_too_large: 413,
  range_not_satisfiable: 416,
  misdirected_request: 421,
  validation_error: 422,
  upload_verification_pending: 425,
  rate_limited: 429,
  too_many_uploads: 429,
  internal_error: 500,
  model_failure: 502,
  service_unavailable: 503,
  insufficient_storage: 507,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The one error type services throw; the onError hook renders it as spec section 7's body. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: { param?: string; status?: number; headers?: Record<string, string> } = {},
  ) {
    super(message);
    // A few codes are shared by two statuses in the spec's decisions (invalid_request
    // is 400 for bad input and 409 for command admission); the caller says which.
    this.status = options.status ?? ERROR_STATUS[code];
  }
}

export type ErrorBody = { error: { code: string; message: string; param?: string; request_id?: string } };

export function errorBody(err: ApiError, requestId?: string): ErrorBody {
  return {
    error: {
      code: err.code,
      message: err.message,
      ...(err.options.param ? { param: err.options.param } : {}),
      ...(requestId ? { request_id: requestId } : {}),
    },
  };
}

/** How long a client is asked to wait after a 507: freeing space takes an operator, not a moment. */
const FULL_DISK_RETRY_AFTER_SECONDS = 60;

/** 507 insufficient_storage: a volume is full (or below its floor), nothing of the request was kept, and a retry later may succeed. */
export function insufficientStorage(volume: Volume["name"], why = `The appliance's ${volume} volume is full`): ApiError {
  return new ApiError("insufficient_storage", `${why}; nothing was stored. Retry later: the operator has been told to free space.`, {
    headers: { "retry-after": String(FULL_DISK_RETRY_AFTER_SECONDS) },
  });
}

/** How long a client is asked to wait after a 503 for a busy database: another writer held it past busy_timeout (5 s). */
const DATABASE_BUSY_RETRY_AFTER_SECONDS = 1;

/** SQLITE_BUSY and its extended codes (SQLITE_BUSY_SNAPSHOT, SQLITE_BUSY_TIMEOUT ...): another connection held the lock. */
const isDatabaseBusy = (error: unknown) => /^SQLITE_BUSY/.test(String((error as { code?: unknown } | null)?.code ?? ""));

type ValidationDetail = { type?: string; valueError?: { path?: PropertyKey[]; message?: string; keys?: string[]; code?: string; expected?: string } };

/**
 * A schema failure in the caller's terms: which field, and whether it is missing, unknown
 * or wrong, without the validator's own phrasing ("Invalid input: ...").
 */
function validationError(v: ValidationDetail): ApiError {
  const issue = v.valueError ?? {};
  // A strict object names the unknown fields in `keys`, at the object's own path.
  const unknown = issue.keys?.[0];
  const path = [...(issue.path ?? []), ...(unknown === undefined ? [] : [unknown])].map(String).join(".");
  const where = v.type === "query" ? "query parameter" : v.type === "params" ? "path parameter" : "field";
  const detail = (issue.message ?? "invalid value").replace(/^Invalid input: /, "");
  if (!path) return new ApiError("validation_error", `Invalid ${v.type ?? "request"}: ${detail}`);
  const message =
    issue.code === "unrecognized_keys"
      ? `Unknown ${where} ${path}: it is not accepted here.`
      : issue.code === "invalid_type" && detail.endsWith("received undefined")
        ? `Missing required ${where} ${path} (expected ${issue.expected ?? "a value"}).`
        : `Invalid ${where} ${path}: ${detail}`;
  return new ApiError("validation_error", message, { param: path });
}

/** Elysia's own failures (bad JSON, schema mismatch, unknown route) mapped onto ApiError. */
function toApiError(code: string | number, error: unknown): ApiError | null {
  if (error instanceof ApiError) return error;
  if (isOutOfSpace(error)) return insufficientStorage(volumeOf(error));
  // Every write transaction waits for the lock (decision 116); one that still did not get it is a passing state, never a 500.
  if (isDatabaseBusy(error)) {
    return new ApiError("service_unavailable", "The database is busy with other writes; retry after the time in Retry-After.", {
      headers: { "retry-after": String(DATABASE_BUSY_RETRY_AFTER_SECONDS) },
    });
  }
  // A response that breaks its own declared schema is our bug, not the caller's: a logged 500.
  if (code === "VALIDATION" && (error as ValidationDetail).type === "response") return null;
  if (code === "VALIDATION") return validationError(error as ValidationDetail);
  // Elysia wraps what our body parser throws; its own verdict is the cause.
  if (code === "PARSE")
    return (error as Error).cause instanceof ApiError
      ? ((error as Error).cause as ApiError)
      : new ApiError("invalid_request", "The request body is not valid JSON.");
  if (code === "NOT_FOUND") return new ApiError("not_found", "Unrecognized request URL.");
  return null;
}

/** Renders every failure as {error: {code, message, param?, request_id}}; unknown ones are logged and become 500. */
export function errorHandling(log: Logger) {
  return new Elysia({ name: "parley.errors" }).onError({ as: "global" }, ({ code, error, set, request }) => {
    const requestId = requestIdOf(set);
    let apiError = toApiError(code, error);
    if (apiError?.code === "insufficient_storage" && isOutOfSpace(error)) {
      log.warn("out of disk space: request refused with 507", { request_id: requestId, volume: volumeOf(error), error: String(error) });
    }
    if (apiError?.code === "service_unavailable" && isDatabaseBusy(error)) {
      log.warn("database busy: request refused with 503", { request_id: requestId, path: new URL(request.url).pathname, error: String(error) });
    }
    if (!apiError) {
      log.error("unhandled error", { request_id: requestId, path: new URL(request.url).pathname, error: String((error as Error)?.stack ?? error) });
      apiError = new ApiError("internal_error", "An internal error occurred. The request id identifies it in the server log.");
    }
    set.status = apiError.status;
    Object.assign(set.headers, apiError.options.headers ?? {});
    return errorBody(apiError, requestId);
  });
}

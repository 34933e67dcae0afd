import { ApiError } from "./errors";

export const CURRENT_VERSION = "2025-01-15";
/** Dated versions this server speaks, newest last. */
export const SUPPORTED_VERSIONS = [CURRENT_VERSION] as const;

/**
 * The optional `Parley-Version` request header (spec 9): a malformed value is 400
 * invalid_request, a well-formed unknown date 400 unsupported_version. Every response
 * names the version it was served with. Called by beforeRouting.
 */
export function applyVersioning(request: Request, headers: Record<string, unknown>): void {
  headers["parley-version"] = CURRENT_VERSION;
  const asked = request.headers.get("parley-version");
  if (asked === null) return;
  const date = new Date(`${asked}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(asked) || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== asked) {
    throw new ApiError("invalid_request", `Parley-Version must be a date such as ${CURRENT_VERSION}.`, { param: "Parley-Version" });
  }
  if (!(SUPPORTED_VERSIONS as readonly string[]).includes(asked)) {
    throw new ApiError("unsupported_version", `Parley-Version ${asked} is not supported; supported versions: ${SUPPORTED_VERSIONS.join(", ")}.`, {
      param: "Parley-Version",
    });
  }
}

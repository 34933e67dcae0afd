import { isIP } from "node:net";
import type { Config } from "../config";
import { ApiError } from "./errors";

/** Names that always mean this machine: a page at one of them cannot be an attacker's (RFC 6761 .localhost). */
const LOOPBACK_NAME = /^(localhost|[a-z0-9.-]+\.localhost)$/;

/** The host name of a Host header value ("name:port", "[v6]:port"), lower-case without a trailing dot; null when it is not one. */
export function hostNameOf(host: string): string | null {
  const m = /^(?:\[([0-9a-f:.]+)\]|([a-z0-9_.-]+))(?::\d{1,5})?$/i.exec(host);
  if (!m) return null;
  if (m[1] !== undefined) return isIP(m[1]) === 6 ? m[1].toLowerCase() : null;
  return m[2]!.toLowerCase().replace(/\.$/, "");
}

/**
 * The Host check against DNS rebinding (decision 114): a browser page at a name the
 * attacker's DNS points at this box reaches it with that name as Host, and its Origin then
 * matches too. So a request is served only when its Host names this box as the operator
 * does: loopback names, any IP address (a page at an IP literal is that address's own
 * origin: rebinding needs a name), the host of PARLEY_PUBLIC_URL, the bind address
 * PARLEY_HOST, and the names in PARLEY_ALLOWED_HOSTS (`*` turns the check off). Ports are
 * not compared: the origin check beside it does that.
 *
 * @example const check = hostCheck(config); check(request); // throws 421 misdirected_request
 */
export function hostCheck(config: Pick<Config, "publicUrl" | "host" | "allowedHosts">): (request: Request) => void {
  if (config.allowedHosts.includes("*")) return () => {};
  const names = new Set([new URL(config.publicUrl).hostname, config.host, ...config.allowedHosts].map((h) => h.toLowerCase().replace(/\.$/, "")));
  return (request) => {
    // app.handle in tests builds requests without a Host header; the URL then holds the host.
    const host = request.headers.get("host") ?? new URL(request.url).host;
    const name = hostNameOf(host);
    if (name !== null && (isIP(name) !== 0 || LOOPBACK_NAME.test(name) || names.has(name))) return;
    throw new ApiError(
      "misdirected_request",
      `This server does not answer to the host name ${JSON.stringify(host.slice(0, 100))}. If it is this server's name, add it to PARLEY_ALLOWED_HOSTS (comma-separated) or set PARLEY_PUBLIC_URL to the address clients use, and restart; an IP address always works.`,
    );
  };
}

import { lookup } from "node:dns/promises";
import { isIP } from "node:net";

/** Why a URL cannot receive webhooks, or null when it can. */
export type UrlVerdict = { param: "url"; message: string } | null;

function ipv4Private(ip: string): boolean {
  const [a = 0, b = 0] = ip.split(".").map(Number);
  return a === 0 || a === 10 || a === 127 || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168);
}

/** Loopback, private, link-local, unique-local and CGNAT addresses: the LAN, not the internet. */
export function isPrivateAddress(ip: string): boolean {
  const lower = ip.toLowerCase();
  if (isIP(lower) === 4) return ipv4Private(lower);
  const mapped = lower.match(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/);
  if (mapped) return ipv4Private(mapped[1]!);
  return lower === "::" || lower === "::1" || /^f[cd]/.test(lower) || /^fe[89ab]/.test(lower);
}

/**
 * HTTPS only (spec 6 rule 4), no credentials in the URL. Hosts on loopback and private
 * networks are allowed unless `denyPrivate` (on-prem receivers live on the LAN); then a
 * host name is resolved and refused if any of its addresses is private.
 */
export async function checkWebhookUrl(raw: string, denyPrivate: boolean): Promise<UrlVerdict> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { param: "url", message: "url must be an absolute https:// URL." };
  }
  if (url.protocol !== "https:") return { param: "url", message: "Only HTTPS webhook URLs are accepted." };
  if (url.username || url.password) return { param: "url", message: "url must not carry credentials; authenticate requests by their signature." };
  if (!url.hostname) return { param: "url", message: "url has no host." };
  if (!denyPrivate) return null;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost")) return privateRefused();
  if (isIP(host)) return isPrivateAddress(host) ? privateRefused() : null;
  try {
    const addresses = await lookup(host, { all: true });
    return addresses.some((a) => isPrivateAddress(a.address)) ? privateRefused() : null;
  } catch {
    return { param: "url", message: `The host ${host} does not resolve.` };
  }
}

function privateRefused(): UrlVerdict {
  return { param: "url", message: "This server refuses webhook URLs on loopback or private networks (PARLEY_WEBHOOK_DENY_PRIVATE)." };
}

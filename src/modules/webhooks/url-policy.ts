import { lookup } from "node:dns/promises";
import { isIP } from "node:net";

/** Why a URL cannot receive webhooks, or null when it can. */
export type UrlVerdict = { param: "url"; message: string } | null;

/** Resolves a host name to its addresses (node:dns by default; tests pass a stand-in for the outside world). */
export type Resolver = (host: string) => Promise<{ address: string }[]>;

/** A DNS lookup cannot be cancelled, so POST /webhooks stops waiting for it after this long. */
export const DNS_TIMEOUT_MS = 3_000;

/** IPv4 ranges that are not the public internet: this host, RFC 1918, CGNAT, loopback, link-local, benchmarking, multicast, reserved and broadcast. */
const IPV4_DENIED: readonly [string, number][] = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
];

function ipv4ToInt(ip: string): number {
  return ip.split(".").reduce((n, part) => n * 256 + Number(part), 0);
}

function ipv4Private(ip: string): boolean {
  const n = ipv4ToInt(ip);
  return IPV4_DENIED.some(([base, bits]) => Math.floor(n / 2 ** (32 - bits)) === Math.floor(ipv4ToInt(base) / 2 ** (32 - bits)));
}

/** The eight 16-bit groups of a valid IPv6 address (a trailing dotted IPv4 part counts as two). */
function ipv6Groups(ip: string): number[] {
  let text = ip;
  const dotted = text.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) {
    const n = ipv4ToInt(dotted[1]!);
    text = `${text.slice(0, -dotted[1]!.length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const parse = (s: string) => (s ? s.split(":").map((g) => Number.parseInt(g, 16)) : []);
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
}

/**
 * The IPv4 address an IPv6 address carries in its last 32 bits, for the forms a client
 * connects through to that IPv4 host: IPv4-mapped (::ffff:0:0/96), IPv4-compatible
 * (::/96) and NAT64 (64:ff9b::/96). URL normalises [::ffff:127.0.0.1] to [::ffff:7f00:1],
 * so the check must decode the groups, not match dotted text.
 */
function embeddedIpv4(groups: number[]): string | null {
  const [a, b, c, d, e, f, g = 0, h = 0] = groups;
  const zeros = b === 0 && c === 0 && d === 0 && e === 0;
  const mapped = a === 0 && zeros && f === 0xffff;
  const compatible = a === 0 && zeros && f === 0;
  const nat64 = a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0;
  if (!mapped && !compatible && !nat64) return null;
  return [g >> 8, g & 0xff, h >> 8, h & 0xff].join(".");
}

/** Loopback, private, link-local, site-local, unique-local, CGNAT and multicast addresses: the LAN, not the internet. */
export function isPrivateAddress(ip: string): boolean {
  const lower = ip.toLowerCase().split("%")[0]!; // a zone id (fe80::1%eth0) does not change the range
  const family = isIP(lower);
  if (family === 4) return ipv4Private(lower);
  if (family !== 6) return true; // not an address: refuse rather than guess
  const groups = ipv6Groups(lower);
  const v4 = embeddedIpv4(groups);
  if (v4) return ipv4Private(v4); // also covers :: and ::1 (0.0.0.0/8)
  const first = groups[0]!;
  // fc00::/7 unique-local, fe80::/10 link-local, fec0::/10 site-local, ff00::/8 multicast.
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xffc0) === 0xfec0 || (first & 0xff00) === 0xff00;
}

async function resolveWithin(resolve: Resolver, host: string, timeoutMs: number): Promise<{ address: string }[] | "timeout"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((done) => (timer = setTimeout(() => done("timeout"), timeoutMs)));
  try {
    return await Promise.race([resolve(host), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const systemResolver: Resolver = (host) => lookup(host, { all: true });

/**
 * HTTPS only (spec 6 rule 4), no credentials in the URL. Hosts on loopback and private
 * networks are allowed unless `denyPrivate` (on-prem receivers live on the LAN); then a
 * host name is resolved and refused if any of its addresses is private.
 */
export async function checkWebhookUrl(raw: string, denyPrivate: boolean, dns: { resolve?: Resolver; timeoutMs?: number } = {}): Promise<UrlVerdict> {
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
  const timeoutMs = dns.timeoutMs ?? DNS_TIMEOUT_MS;
  try {
    const addresses = await resolveWithin(dns.resolve ?? systemResolver, host, timeoutMs);
    if (addresses === "timeout") return { param: "url", message: `The host ${host} did not resolve within ${timeoutMs} ms.` };
    return addresses.some((a) => isPrivateAddress(a.address)) ? privateRefused() : null;
  } catch {
    return { param: "url", message: `The host ${host} does not resolve.` };
  }
}

function privateRefused(): UrlVerdict {
  return { param: "url", message: "This server refuses webhook URLs on loopback or private networks (PARLEY_WEBHOOK_DENY_PRIVATE)." };
}

import { isIP } from "node:net";

/**
 * Where an address leads, as the webhook URL policy (decision 074) sees it:
 * - `local`: this machine or its cloud platform - loopback, unspecified, link-local and
 *   the cloud metadata services. Never a receiver by default: a request there reads
 *   what only the server itself should (169.254.169.254 answers with credentials).
 * - `private`: the LAN - RFC 1918, CGNAT, unique-local, site-local, benchmarking,
 *   multicast and reserved. On-prem receivers live here.
 * - `public`: everything else.
 * Anything that is not an address is `local`: refuse rather than guess.
 */
export type AddressScope = "local" | "private" | "public";

type Range = readonly [base: string, bits: number];

const IPV4_LOCAL: readonly Range[] = [
  ["0.0.0.0", 8], // "this host": 0.0.0.0 connects to the server itself
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, with the metadata service of AWS, GCP, Azure, OCI at 169.254.169.254
  ["100.100.100.200", 32], // Alibaba Cloud metadata (inside CGNAT, which is otherwise private)
  ["168.63.129.16", 32], // Azure WireServer (a public address only the VM's host answers)
  ["192.0.0.192", 32], // Oracle Cloud's former metadata address
];

const IPV4_PRIVATE: readonly Range[] = [
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["172.16.0.0", 12],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
];

/** AWS's IPv6 metadata service, inside the unique-local range that is otherwise private. */
const IPV6_METADATA = "fd00:ec2::254";

function ipv4ToInt(ip: string): number {
  return ip.split(".").reduce((n, part) => n * 256 + Number(part), 0);
}

function inRanges(ip: string, ranges: readonly Range[]): boolean {
  const n = ipv4ToInt(ip);
  return ranges.some(([base, bits]) => Math.floor(n / 2 ** (32 - bits)) === Math.floor(ipv4ToInt(base) / 2 ** (32 - bits)));
}

function ipv4Scope(ip: string): AddressScope {
  if (inRanges(ip, IPV4_LOCAL)) return "local";
  return inRanges(ip, IPV4_PRIVATE) ? "private" : "public";
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

const dottedQuad = (hi: number, lo: number) => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join(".");

/**
 * The IPv4 address an IPv6 address leads to, for the forms a client connects through to
 * that IPv4 host: IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96, so :: and ::1 too),
 * NAT64 (64:ff9b::/96) and 6to4 (2002::/16). URL normalises [::ffff:127.0.0.1] to
 * [::ffff:7f00:1], so the groups are decoded, not the dotted text matched.
 */
function embeddedIpv4(groups: number[]): string | null {
  const [a, b, c, d, e, f, g = 0, h = 0] = groups;
  if (a === 0x2002) return dottedQuad(b!, c!);
  const zeros = b === 0 && c === 0 && d === 0 && e === 0;
  const mapped = a === 0 && zeros && f === 0xffff;
  const compatible = a === 0 && zeros && f === 0;
  const nat64 = a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0;
  return mapped || compatible || nat64 ? dottedQuad(g, h) : null;
}

function ipv6Scope(ip: string): AddressScope {
  const groups = ipv6Groups(ip);
  const v4 = embeddedIpv4(groups);
  if (v4) return ipv4Scope(v4);
  const first = groups[0]!;
  if ((first & 0xffc0) === 0xfe80) return "local"; // fe80::/10 link-local
  if (groups.join(":") === ipv6Groups(IPV6_METADATA).join(":")) return "local";
  // fc00::/7 unique-local, fec0::/10 site-local, ff00::/8 multicast.
  const lan = (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfec0 || (first & 0xff00) === 0xff00;
  return lan ? "private" : "public";
}

/** The scope of an IPv4 or IPv6 address (a zone id, as in fe80::1%eth0, does not change it). */
export function addressScope(ip: string): AddressScope {
  const bare = ip.toLowerCase().split("%")[0]!;
  const family = isIP(bare);
  if (family === 4) return ipv4Scope(bare);
  return family === 6 ? ipv6Scope(bare) : "local";
}

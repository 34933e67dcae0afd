import { isIP } from "node:net";
import type { Resolver } from "../../dns";
import { addressScope } from "./address-scope";

/** Why a URL cannot receive webhooks, or null when it can. */
export type UrlVerdict = { param: "url"; message: string } | null;

/** The operator's settings (config.webhooks): whether LAN hosts are refused too, and the hosts exempt from any refusal. */
export type TargetPolicy = { denyPrivate: boolean; allowHosts: readonly string[] };

/** How names are resolved; a lookup cannot be cancelled, so the check stops waiting after timeoutMs. */
export type Lookup = { resolve: Resolver; timeoutMs?: number };

/** POST /webhooks and each attempt stop waiting for DNS after this long. */
export const DNS_TIMEOUT_MS = 3_000;

/**
 * Where an attempt may go (decision 074): `connect` lists the addresses that were checked,
 * to connect to them and no others (empty: send to the URL as it is, its host being an
 * address or an allowed host); `refused` is a policy refusal; `unresolved` a name DNS
 * did not answer for.
 */
export type WebhookTarget = { kind: "connect"; addresses: string[] } | { kind: "refused" | "unresolved"; message: string };

/** Names of the machine itself and of cloud metadata services: refused whatever they resolve to, or whether they resolve here at all. */
const LOCAL_NAMES = new Set(["localhost", "metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal"]);

const LOCAL_REFUSED =
  "This server does not send webhooks to loopback, link-local or cloud metadata addresses; the operator can allow a host with PARLEY_WEBHOOK_ALLOW_HOSTS.";
const PRIVATE_REFUSED = "This server refuses webhook URLs on private networks (PARLEY_WEBHOOK_DENY_PRIVATE).";

/** A host as policy compares it: lower case, no IPv6 brackets, no trailing dot (localhost. is localhost). */
function bareHost(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();
}

/** A host in the form URL gives it, so "::1", "[::1]" and "0:0:0:0:0:0:0:1" name one host. */
function canonicalHost(host: string): string {
  const bare = host.replace(/^\[|\]$/g, "");
  try {
    return bareHost(new URL(`https://${isIP(bare) === 6 ? `[${bare}]` : bare}/`).hostname);
  } catch {
    return bareHost(bare);
  }
}

/**
 * An allow-list entry: `host` (any port) or `host:port` (that port only; `[v6]:port` for an
 * IPv6 address). A bare IPv6 address has colons of its own and no port.
 */
function parseEntry(entry: string): { host: string; port: string | null } {
  const m = /^(\[[^\]]*\]|[^:]*):(\d{1,5})$/.exec(entry);
  return m ? { host: canonicalHost(m[1]!), port: String(Number(m[2])) } : { host: canonicalHost(entry), port: null };
}

/** Whether the URL's host (and, for a `host:port` entry, its port) is on the operator's allow list. */
function isAllowed(url: URL, policy: TargetPolicy): boolean {
  const host = bareHost(url.hostname);
  const port = url.port || "443";
  return policy.allowHosts.some((entry) => {
    const allowed = parseEntry(entry);
    return allowed.host === host && (allowed.port === null || allowed.port === port);
  });
}

function refusalOf(addresses: readonly string[], policy: TargetPolicy): string | null {
  const scopes = addresses.map(addressScope);
  if (scopes.includes("local")) return LOCAL_REFUSED;
  return policy.denyPrivate && scopes.includes("private") ? PRIVATE_REFUSED : null;
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

/**
 * Decides where a webhook URL may be sent, resolving its host name: at creation, and
 * again right before every attempt, whose connection then goes to the addresses checked
 * here (DNS rebinding cannot swap them). A name is refused if any of its addresses is. A
 * host in PARLEY_WEBHOOK_ALLOW_HOSTS, as the URL writes it, is refused nothing (its
 * name is still resolved and pinned), on the entry's port only when it names one; an
 * allowed address does not make other names that resolve to it allowed.
 */
export async function resolveWebhookTarget(url: URL, policy: TargetPolicy, dns: Lookup): Promise<WebhookTarget> {
  const host = bareHost(url.hostname);
  const allowed = isAllowed(url, policy);
  if (isIP(host)) {
    const refusal = allowed ? null : refusalOf([host], policy);
    return refusal ? { kind: "refused", message: refusal } : { kind: "connect", addresses: [] };
  }
  if (!allowed && (LOCAL_NAMES.has(host) || host.endsWith(".localhost"))) return { kind: "refused", message: LOCAL_REFUSED };
  const timeoutMs = dns.timeoutMs ?? DNS_TIMEOUT_MS;
  let found: { address: string }[] | "timeout";
  try {
    found = await resolveWithin(dns.resolve, host, timeoutMs);
  } catch {
    found = [];
  }
  if (found === "timeout") return { kind: "unresolved", message: `The host ${host} did not resolve within ${timeoutMs} ms.` };
  if (found.length === 0) return { kind: "unresolved", message: `The host ${host} does not resolve.` };
  const addresses = found.map((a) => a.address);
  const refusal = allowed ? null : refusalOf(addresses, policy);
  return refusal ? { kind: "refused", message: refusal } : { kind: "connect", addresses };
}

/**
 * POST /webhooks: HTTPS only (spec 6 rule 4), no credentials in the URL, and a target
 * the policy allows. A name that does not resolve yet is accepted by default (each
 * attempt checks again), refused when PARLEY_WEBHOOK_DENY_PRIVATE asks for proof that
 * the host is public.
 */
export async function checkWebhookUrl(raw: string, policy: TargetPolicy, dns: Lookup): Promise<UrlVerdict> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { param: "url", message: "url must be an absolute https:// URL." };
  }
  if (url.protocol !== "https:") return { param: "url", message: "Only HTTPS webhook URLs are accepted." };
  if (url.username || url.password) return { param: "url", message: "url must not carry credentials; authenticate requests by their signature." };
  if (!url.hostname) return { param: "url", message: "url has no host." };
  const target = await resolveWebhookTarget(url, policy, dns);
  if (target.kind === "refused" || (target.kind === "unresolved" && policy.denyPrivate)) return { param: "url", message: target.message };
  return null;
}

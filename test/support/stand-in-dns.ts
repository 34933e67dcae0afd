import type { Resolver } from "../../src/dns";

/**
 * Test doubles for DNS, the outside world: tests never ask a real resolver. `offlineDns`
 * (the test app's default) answers no name, as a box without DNS would; `standInDns`
 * answers the names it is given, and counts the lookups.
 */
export const offlineDns: Resolver = async (host) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
};

/** A resolver that knows only `records` (name -> addresses, or a function of the lookup's number for a name that changes its answer). */
export function standInDns(records: Record<string, string[] | ((lookup: number) => string[])>): Resolver & { lookups: string[] } {
  const lookups: string[] = [];
  const resolve = async (host: string) => {
    lookups.push(host);
    const record = records[host];
    const addresses = typeof record === "function" ? record(lookups.filter((h) => h === host).length) : record;
    if (!addresses) return offlineDns(host);
    return addresses.map((address) => ({ address }));
  };
  return Object.assign(resolve, { lookups });
}

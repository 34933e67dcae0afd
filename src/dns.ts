import { lookup } from "node:dns/promises";

/** Resolves a host name to its addresses: the system resolver in serve, a stand-in for the outside world in tests. */
export type Resolver = (host: string) => Promise<{ address: string }[]>;

export const systemResolver: Resolver = (host) => lookup(host, { all: true });

import { beforeAll, describe, expect, test } from "bun:test";
import { SCOPES } from "../../src/http/scopes";
import { type Matrix, matrixFixture, routes, served, EXEMPT } from "./matrix-fixture";

/**
 * Every route of the app against every foreign credential (decision 084), in the spirit of
 * Unkey's shared route tests (the world they act on: matrix-fixture.ts).
 *
 * One owner (a project, test mode) holds one of everything. Each foreign credential sends
 * each route a request aimed at the owner's objects, and must get 401, 403 or 404 whenever
 * the request names one of them, and never, whatever the status, a byte of the owner's data.
 */

let t: Matrix["t"];
let own: Matrix["own"];
let marker: Matrix["marker"];
let scopeOf: Matrix["scopeOf"];
let takesEndUser: Matrix["takesEndUser"];
let request: Matrix["request"];
let fillPath: Matrix["fillPath"];
/** The routes with a REQUESTS entry. */
let requested: Matrix["requested"];

type Credential = {
  name: string;
  /** The key, or null for no Authorization header; a function when it depends on the route. */
  key: (route: string) => string | null;
  /** Owner values this credential legitimately holds too (a device token's own end user). */
  shares?: string[];
  /** Statuses allowed for every request, naming the owner's objects or not. */
  always?: number[];
};

const credentials: Credential[] = [];
let ownerKey = "";
/** Another end user's key for the end_user_id rule alone, so the matrix's calls do not spend its rate limit. */
let confinedKey = "";

beforeAll(async () => {
  const f = await matrixFixture();
  ({ t, own, marker, scopeOf, takesEndUser, request, requested, fillPath } = f);
  const { owner, intruder, someoneElse, person, siblingToken, uploadToken } = f;
  ownerKey = owner.test;
  const allScopesBut = (scope: string | null) => owner.key("test", { scopes: SCOPES.filter((s) => s !== scope) });
  const restricted = new Map<string | null, string>();
  const otherEndUsersKey = owner.key("test", { endUserId: someoneElse });
  confinedKey = owner.key("test", { endUserId: someoneElse });

  credentials.push(
    { name: "no credential", key: () => null, always: [401] },
    { name: "another project's secret key", key: () => intruder.test },
    { name: "the other mode's secret key", key: () => owner.live },
    {
      name: "a restricted key without the route's scope",
      key: (route) => {
        const scope = scopeOf.get(route) ?? null;
        if (!restricted.has(scope)) restricted.set(scope, allScopesBut(scope));
        return restricted.get(scope)!;
      },
      always: [403],
    },
    { name: "another end user's key", key: () => otherEndUsersKey },
    { name: "another device's token", key: () => siblingToken, shares: [person.id] },
    { name: "an upload token as a bearer", key: () => uploadToken, always: [403] },
  );
});

/** The request a route's entry sends, with its `end_user_id` (query or body) set to `endUserId`. */
function namingEndUser(route: string, endUserId: string): { body?: unknown; query: string } {
  const { body, query } = request(route);
  const params = new URLSearchParams(query ?? "");
  if (takesEndUser.get(route) === "query") params.set("end_user_id", endUserId);
  const named = takesEndUser.get(route) === "body" ? { ...(body as object), end_user_id: endUserId } : body;
  return { body: named, query: params.toString() };
}

describe("access matrix", () => {
  test("covers the app: exemptions and request entries name routes that exist", () => {
    const all = new Set(served);
    expect(routes.length).toBeGreaterThan(60);
    for (const route of [...Object.keys(EXEMPT), ...requested]) expect([route, all.has(route)]).toEqual([route, true]);
  });

  // The control: what the matrix sends is aimed at real objects, so a 404 above is the rule's and not a typo's.
  test.each(routes.filter((r) => r.startsWith("GET ")))("%s answers the owner's own credential", async (route) => {
    const { query } = request(route);
    const path = fillPath(route.slice("GET ".length)) + (query ? `?${query}` : "");
    // Routes with no documented scope are a device's own (the firmware download).
    const r = await t.call("GET", path, { key: scopeOf.get(route) ? ownerKey : marker.deviceToken! });
    expect({ route, status: r.status }).toEqual({ route, status: 200 });
    // A filtered list finds the owner's object, so its empty page for others is the rule's doing.
    if (query) expect({ route, found: Object.values(own).some((v) => JSON.stringify(r.body).includes(v)) }).toEqual({ route, found: true });
  });

  test.each(routes)("%s refuses every foreign credential and leaks nothing", async (route) => {
    const [method, pattern] = route.split(" ") as [string, string];
    const { body, query } = request(route);
    const path = fillPath(pattern) + (query ? `?${query}` : "");
    for (const credential of credentials) {
      const foreign = Object.values(own).filter((v) => v !== own.firmware && !credential.shares?.includes(v));
      const secrets = [...foreign, ...Object.values(marker)];
      const sent = `${path} ${JSON.stringify(body ?? null)}`;
      // List filters answer an empty page for a foreign id, as for an unknown one: only the path and body count as naming.
      const names = foreign.some((v) => `${path.split("?")[0]} ${JSON.stringify(body ?? null)}`.includes(v));
      const r = await t.call(method, path, { key: credential.key(route), body });
      const text = typeof r.body === "string" ? r.body : JSON.stringify(r.body);
      const seen = { route, credential: credential.name, status: r.status, sent };
      if (credential.always)
        expect({ ...seen, status: credential.always.includes(r.status) ? "as expected" : r.status }).toEqual({ ...seen, status: "as expected" });
      else if (names) expect({ ...seen, status: [401, 403, 404].includes(r.status) ? "refused" : r.status }).toEqual({ ...seen, status: "refused" });
      else expect({ ...seen, status: r.status < 500 ? "answered" : r.status }).toEqual({ ...seen, status: "answered" });
      // What the request itself carried may come back (a 404 names the id it could not find); nothing else of the owner's may.
      expect({ ...seen, leaked: secrets.filter((v) => text.includes(v) && !sent.includes(v)) }).toEqual({ ...seen, leaked: [] });
    }
  });

  // The one rule for a confined key naming another end user (decision 131): every route that
  // takes end_user_id answers it alike, 403 forbidden, and alike for an end user that does not
  // exist, so the answer confirms nothing. Routes whose path names an object answer for that first.
  test("the OpenAPI document names the routes that take end_user_id", () => {
    expect([...takesEndUser.keys()].filter((r) => !r.includes(":")).length).toBeGreaterThanOrEqual(8);
  });
  test.each(served.filter((r) => !r.includes(":")))("%s: a key confined to one end user naming another is 403 forbidden", async (route) => {
    if (!takesEndUser.has(route)) return;
    const [method, path] = route.split(" ") as [string, string];
    for (const endUserId of [own.endUser!, "eu_01nosuchenduser000000000000"]) {
      const { body, query } = namingEndUser(route, endUserId);
      const r = await t.call(method, `${path}${query ? `?${query}` : ""}`, { key: confinedKey, body });
      expect({ route, endUserId, status: r.status, code: r.body?.error?.code }).toEqual({ route, endUserId, status: 403, code: "forbidden" });
    }
  });
});

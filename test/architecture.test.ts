import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { Glob } from "bun";

/**
 * The dependency rules of decision 083, read from the source: every import and
 * export-from line of src/ (type-only imports count: they couple as much), resolved to
 * a file. Each failure names the offending edge, `importer -> imported`.
 */

const ROOT = join(import.meta.dir, "..");

/** Folders below the modules: they never import a module, the CLI or the composition root. */
const LOWER_LAYERS = ["src/db/", "src/http/", "src/engines/", "src/jobs/", "src/storage/", "src/events/", "src/model-files/", "src/runtime/"];
/** What sits above them. */
const UPPER = [
  "src/modules/",
  "src/cli.ts",
  "src/cli/",
  "src/models/",
  "src/app.ts",
  "src/boot.ts",
  "src/main.ts",
  "src/background.ts",
  "src/demo.ts",
  "src/simulator/",
];
/** Leaves: they import nothing of ours outside themselves. */
const LEAVES = [
  "src/clock.ts",
  "src/ids.ts",
  "src/crypto.ts",
  "src/log.ts",
  "src/config.ts",
  "src/tenancy.ts",
  "src/cli/args.ts",
  "src/model-files/",
  "src/runtime/",
];

type Edge = { from: string; to: string };

const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^;'"]*?\bfrom\s*["']([^"']+)["']|(?:^|\n)\s*import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g;

function resolve(from: string, spec: string): string | null {
  if (!spec.startsWith(".")) return null;
  const base = relative(ROOT, join(ROOT, dirname(from), spec)).replaceAll("\\", "/");
  if (!base.startsWith("src/")) return null;
  for (const candidate of [base, `${base}.ts`, `${base}/index.ts`]) if (candidate.endsWith(".ts") && existsSync(join(ROOT, candidate))) return candidate;
  return null; // a text import (prompts, the dashboard's files)
}

function readEdges(): Edge[] {
  const edges: Edge[] = [];
  for (const file of new Glob("src/**/*.ts").scanSync(ROOT)) {
    const from = file.replaceAll("\\", "/");
    for (const m of readFileSync(join(ROOT, from), "utf8").matchAll(IMPORT)) {
      const to = resolve(from, m[1] ?? m[2] ?? m[3]!);
      if (to && !edges.some((e) => e.from === from && e.to === to)) edges.push({ from, to });
    }
  }
  return edges;
}

const moduleOf = (file: string) => /^src\/modules\/([^/]+)\//.exec(file)?.[1] ?? null;
/** A module's store: `store.ts` or `*-store.ts`, the files holding its SQL. Private to the module. */
const isStore = (file: string) => moduleOf(file) !== null && /(^|[/-])store\.ts$/.test(file);
/** Top-level area of src: a folder (`engines`) or a root file (`boot.ts`). */
const areaOf = (file: string) => file.split("/")[1]!;
const show = (e: Edge) => `${e.from} -> ${e.to}`;

const all = readEdges();

/** Each strongly connected component of `graph` (Tarjan): its members and one shortest cycle through them. */
function cycles(graph: Map<string, Set<string>>): { members: string[]; path: string[] }[] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: { members: string[]; path: string[] }[] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) !== idx.get(v)) return;
    const scc: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      scc.push(w);
      if (w === v) break;
    }
    if (scc.length > 1) found.push({ members: scc.sort(), path: shortestCycle(graph, v, new Set(scc)) });
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) visit(v);
  return found;
}

/** The shortest path v -> ... -> v inside one component (breadth first). */
function shortestCycle(graph: Map<string, Set<string>>, start: string, within: Set<string>): string[] {
  const prev = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift()!;
    for (const w of [...(graph.get(v) ?? [])].sort()) {
      if (!within.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(prev.get(path[0]!)!);
        return [...path, start];
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

/** Cycles in the graph of `group(file)`, each hop named by one file edge that makes it. */
function groupCycles(edges: Edge[], group: (file: string) => string | null): string[] {
  const graph = new Map<string, Set<string>>();
  const witness = new Map<string, Edge[]>();
  for (const e of edges) {
    const a = group(e.from);
    const b = group(e.to);
    if (!a || !b || a === b) continue;
    graph.set(a, (graph.get(a) ?? new Set()).add(b));
    witness.set(`${a}>${b}`, [...(witness.get(`${a}>${b}`) ?? []), e]);
  }
  return cycles(graph).map(({ members, path }) => {
    const hops = path.slice(1).map((b, i) => `  ${path[i]} -> ${b}: ${witness.get(`${path[i]}>${b}`)!.map(show).join(", ")}`);
    return `cycle among ${members.join(", ")}, for one: ${path.join(" -> ")}\n${hops.join("\n")}`;
  });
}

describe("architecture (decision 083)", () => {
  test("the import reader sees the source", () => {
    expect(all.length).toBeGreaterThan(300);
    expect(all).toContainEqual({ from: "src/app.ts", to: "src/deps.ts" });
  });

  test("no import cycle between module folders", () => {
    expect(groupCycles(all, moduleOf)).toEqual([]);
  });

  test("no module imports another module's store", () => {
    const offending = all.filter((e) => isStore(e.to) && moduleOf(e.from) !== moduleOf(e.to));
    expect(offending.map(show)).toEqual([]);
  });

  test("lower layers import neither modules, nor the CLI, nor the composition root", () => {
    const offending = all.filter((e) => LOWER_LAYERS.some((l) => e.from.startsWith(l)) && UPPER.some((u) => e.to.startsWith(u)));
    expect(offending.map(show)).toEqual([]);
  });

  test("modules use nothing of the CLI but the leaf args.ts", () => {
    const offending = all.filter(
      (e) => e.from.startsWith("src/modules/") && (e.to === "src/cli.ts" || e.to.startsWith("src/cli/")) && e.to !== "src/cli/args.ts",
    );
    expect(offending.map(show)).toEqual([]);
  });

  test("no import cycle between the top-level areas of src", () => {
    // Deps is the one type every module is handed, and it names the state the modules own
    // (decision 085): a hub of types both ways, so it stays out of the area graph. The test
    // below holds it to types only, so no code runs through it.
    const runtime = all.filter((e) => e.from !== "src/deps.ts" && e.to !== "src/deps.ts");
    expect(groupCycles(runtime, areaOf)).toEqual([]);
  });

  test("deps.ts imports types only", () => {
    const lines = readFileSync(join(ROOT, "src/deps.ts"), "utf8")
      .split("\n")
      .filter((l) => /^\s*import\b/.test(l));
    expect(lines.filter((l) => !/^\s*import type\b/.test(l))).toEqual([]);
  });

  test("leaves import nothing of ours", () => {
    const leafOf = (file: string) => LEAVES.find((leaf) => (leaf.endsWith("/") ? file.startsWith(leaf) : file === leaf));
    const offending = all.filter((e) => leafOf(e.from) && leafOf(e.to) !== leafOf(e.from));
    expect(offending.map(show)).toEqual([]);
  });
});

/**
 * Every table has one owner (decision 132): a module folder, or for the plumbing below the
 * modules one file. Only the owner's files hold SQL that writes the table; everyone else
 * calls the owner's functions, so what must go with a write (the credential cache's
 * forget(), an event's wake-up) is written once, beside it.
 */
const TABLE_OWNERS: Record<string, string> = {
  schema_migrations: "src/db/migrate.ts",
  jobs: "src/jobs/queue.ts",
  live_progress: "src/modules/live/store.ts",
  live_segments: "src/modules/live/store.ts",
  credentials: "src/http/credentials.ts",
  idempotency_keys: "src/http/idempotency.ts",
  events: "src/events/outbox.ts",
  data_keys: "src/storage/encryption/data-keys.ts",
  organizations: "src/modules/projects/",
  projects: "src/modules/projects/",
  admins: "src/modules/admins/",
  admin_sessions: "src/modules/admins/",
  admin_identities: "src/modules/sso/store.ts",
  setup_token: "src/modules/admins/",
  admin_second_factors: "src/modules/admins/mfa-store.ts",
  admin_recovery_codes: "src/modules/admins/mfa-store.ts",
  end_users: "src/modules/end-users/",
  devices: "src/modules/devices/",
  device_commands: "src/modules/commands/",
  firmware_releases: "src/modules/firmware/",
  ota_assignments: "src/modules/firmware/",
  config_overrides: "src/modules/config/",
  organization_config: "src/modules/config/",
  recordings: "src/modules/recordings/",
  recording_chunks: "src/modules/recordings/",
  recording_uploads: "src/modules/recordings/",
  transcriptions: "src/modules/transcriptions/",
  transcription_revisions: "src/modules/transcriptions/",
  summaries: "src/modules/summaries/",
  chunks: "src/modules/search/",
  chunks_fts: "src/modules/search/",
  chunk_vectors: "src/modules/search/",
  search_index: "src/modules/search/",
  vector_libraries: "src/modules/search/",
  chunk_cells: "src/modules/search/",
  cell_index_versions: "src/modules/search/",
  ask_sessions: "src/modules/ask/",
  ask_messages: "src/modules/ask/",
  voices: "src/modules/voices/",
  voiceprints: "src/modules/voices/",
  webhook_endpoints: "src/modules/webhooks/",
  webhook_deliveries: "src/modules/webhooks/",
  audit_events: "src/modules/audit/",
  audit_event_resources: "src/modules/audit/",
  audit_event_subjects: "src/modules/audit/",
  legal_holds: "src/modules/legal-holds/",
  exports: "src/modules/exports/",
  redaction_passes: "src/modules/redaction/",
  break_glass_grants: "src/modules/break-glass/",
  portal_invites: "src/modules/portal/store.ts",
  portal_sessions: "src/modules/portal/store.ts",
};

/** SQL that writes a table: uppercase keywords, as every statement of src/ is written (prose says "update a row"). */
const WRITE =
  /\b(?:INSERT(?:\s+OR\s+[A-Z]+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+[A-Z]+)?|DELETE\s+FROM)\s+["`]?(\$\{[^}]*\}|[a-z_][a-z0-9_]*)(?=[\s"`(]|$)/g;

/** Every write statement of a source text, as "table" per occurrence; comments are prose, not SQL. */
const writesIn = (text: string) =>
  [
    ...text
      .replace(/\/\*[\s\S]*?\*\//g, "")
      .replace(/(^|[^:])\/\/.*$/gm, "$1")
      .matchAll(WRITE),
  ].map((m) => m[1]!);

/** The tables the migrations leave: created more often than dropped. */
function migratedTables(): string[] {
  const count = new Map<string, number>();
  for (const file of new Glob("migrations/*.sql").scanSync(ROOT)) {
    const sql = readFileSync(join(ROOT, file), "utf8");
    for (const m of sql.matchAll(/CREATE (?:VIRTUAL )?TABLE (?:IF NOT EXISTS )?([a-z_]+)/g)) count.set(m[1]!, (count.get(m[1]!) ?? 0) + 1);
    for (const m of sql.matchAll(/DROP TABLE (?:IF EXISTS )?([a-z_]+)/g)) count.set(m[1]!, (count.get(m[1]!) ?? 0) - 1);
  }
  return [...count].filter(([, n]) => n > 0).map(([t]) => t);
}

describe("table ownership (decision 132)", () => {
  test("the write reader finds the statements it must", () => {
    expect(writesIn("db.query(`UPDATE devices SET x = 1`); db.run('DELETE FROM events WHERE id = ?'); INSERT OR REPLACE INTO jobs (id)")).toEqual([
      "devices",
      "events",
      "jobs",
    ]);
    expect(writesIn("// update a row, delete from the list, insert into the page\n/** every UPDATE or DELETE of credentials */")).toEqual([]);
  });

  test("every table the migrations make has an owner", () => {
    const tables = migratedTables();
    expect(tables.length).toBeGreaterThan(30);
    expect(tables.filter((t) => !(t in TABLE_OWNERS) && t !== "schema_migrations")).toEqual([]);
  });

  test("only a table's owner writes it", () => {
    const offending: string[] = [];
    let seen = 0;
    for (const file of new Glob("src/**/*.ts").scanSync(ROOT)) {
      const path = file.replaceAll("\\", "/");
      for (const table of writesIn(readFileSync(join(ROOT, path), "utf8"))) {
        seen++;
        const owner = TABLE_OWNERS[table];
        if (!owner) offending.push(`${path} writes ${table}, which has no owner`);
        else if (!(owner.endsWith("/") ? path.startsWith(owner) : path === owner)) offending.push(`${path} writes ${table}, owned by ${owner}`);
      }
    }
    expect(seen).toBeGreaterThan(100);
    expect(offending).toEqual([]);
  });
});

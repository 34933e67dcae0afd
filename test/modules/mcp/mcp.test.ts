// The MCP server at /mcp, driven by the SDK's own client over real HTTP against the app
// listening on a random port: what an assistant sees, and what it must never see.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { HashingTestEmbedder } from "../../../src/engines/embedder.test-double";
import { ScriptedLlm } from "../../../src/engines/llm.test-double";
import { findLiveApiKeys, issueCredential } from "../../../src/http/credentials";
import { makeTenant, makeTestApp } from "../../helpers";
import { BUDGET, HIKING, type Line, seedTranscript } from "../search-corpus";

let t: Awaited<ReturnType<typeof makeTestApp>>;
let server: ReturnType<typeof Bun.serve>;
let acme: ReturnType<typeof makeTenant>;
let adaKey: string;
let ada: string;
let bob: string;
const recs = { budget: "", long: "", bob: "" };
const clients: Client[] = [];

/** 300 lines of about 90 characters: more than two pages of get_transcript. */
const LONG: Line[] = Array.from({ length: 300 }, (_, i) => [
  i * 10,
  i * 10 + 10,
  "SPEAKER_1",
  `Line ${i} of a long meeting goes on about the logistics plan and its many details.`,
]);

beforeAll(async () => {
  t = await makeTestApp({ engines: { embedder: new HashingTestEmbedder(), llm: new ScriptedLlm() }, env: { PARLEY_ASK_PROVIDER: "extractive" } });
  acme = makeTenant(t.deps);
  ada = (await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "Ada" } })).body.id;
  bob = (await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "Bob" } })).body.id;
  adaKey = acme.key("test", { endUserId: ada });
  const tenant = { projectId: acme.project.id, mode: "test" as const };
  const budget = seedTranscript(t.deps, tenant, { endUserId: ada, recordedAt: "2026-01-10T09:00:00.000Z", lines: BUDGET, name: "Planning call" });
  recs.budget = budget.recordingId;
  recs.long = seedTranscript(t.deps, tenant, { endUserId: ada, recordedAt: "2026-01-15T09:00:00.000Z", lines: LONG }).recordingId;
  recs.bob = seedTranscript(t.deps, tenant, { endUserId: bob, recordedAt: "2026-01-11T09:00:00.000Z", lines: HIKING }).recordingId;
  await t.deps.queue.drain();
  const summary = await t.call("POST", "/v1/summaries", { key: acme.test, body: { transcription_id: budget.transcriptionId } });
  expect(summary.status).toBe(202);
  await t.deps.queue.drain();
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => t.app.handle(req) });
});

afterAll(async () => {
  for (const c of clients) await c.close();
  server?.stop(true);
});

/** An MCP client connected as an assistant configured with `key` (and the query string given). */
async function connect(key: string, query = ""): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${server.port}/mcp${query}`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: "test-assistant", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

type ToolResult = { isError?: boolean; structuredContent?: any; content: { type: string; text?: string }[] };
const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as ToolResult;
const credentialIdOf = (key: string) => findLiveApiKeys(t.deps.db, { token: key })[0]?.id;
const errorText = (r: ToolResult) => (r.isError ? (r.content[0]?.text ?? "") : "(no error)");

describe("the MCP server as an end-user-scoped key", () => {
  test("lists the five tools, each with a description and an input schema, and the transcript resource", async () => {
    const client = await connect(adaKey);
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual(["ask", "get_summary", "get_transcript", "list_recordings", "search_conversations"]);
    for (const tool of tools) {
      expect(tool.description?.length ?? 0).toBeGreaterThan(60);
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema?.type).toBe("object");
    }
    const search = tools.find((x) => x.name === "search_conversations");
    expect(Object.keys(search?.inputSchema.properties ?? {}).sort()).toEqual(["limit", "query", "recorded_after", "recorded_before"]);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate)).toEqual(["parley://recordings/{id}/transcript"]);
  });

  test("search_conversations finds the end user's passage with its recording, speaker and moment, and none of another end user's", async () => {
    const client = await connect(adaKey);
    const found = await call(client, "search_conversations", { query: "marketing budget next quarter", limit: 3 });
    expect(found.isError).toBeFalsy();
    const best = found.structuredContent.results[0];
    // A chunk joins the call's first lines: two speakers, so none is named.
    expect(best).toMatchObject({ recording_id: recs.budget, speaker: null, start_ms: 0, end_ms: 31_000, recorded_at: "2026-01-10T09:00:00.000Z" });
    expect(best.text).toContain("forty thousand dollars");
    expect(JSON.parse(found.content[0]?.text ?? "{}")).toEqual(found.structuredContent);
    // Bob's hiking talk matches these words exactly; Ada's key never reaches it.
    const hiking = await call(client, "search_conversations", { query: "hiking boots trailhead" });
    expect(hiking.structuredContent.results.map((r: { recording_id: string }) => r.recording_id)).not.toContain(recs.bob);
    const ranged = await call(client, "search_conversations", { query: "logistics plan", recorded_before: "2026-01-12T00:00:00Z" });
    expect(ranged.structuredContent.results.map((r: { recording_id: string }) => r.recording_id)).not.toContain(recs.long);
  });

  test("ask answers with citations of the end user's moments", async () => {
    const client = await connect(adaKey);
    const answered = await call(client, "ask", { question: "What is the marketing budget for next quarter?" });
    expect(answered.isError).toBeFalsy();
    expect(answered.structuredContent.answer).toContain("forty thousand");
    expect(answered.structuredContent.citations[0]).toMatchObject({ recording_id: recs.budget, start_ms: 0 });
    // Kept as the end user's Ask session, as the dashboard shows it.
    const session = await t.call("GET", `/v1/ask/sessions/${answered.structuredContent.session_id}`, { key: adaKey });
    expect(session.body).toMatchObject({ end_user_id: ada, message_count: 2 });
  });

  test("get_transcript reads a window with speaker names, a page at a time with a cursor", async () => {
    const client = await connect(adaKey);
    const window = await call(client, "get_transcript", { recording_id: recs.budget, start_ms: 30_000, end_ms: 60_000 });
    expect(window.structuredContent.lines.map((l: { start_ms: number }) => l.start_ms)).toEqual([12_000, 31_000, 52_000]);
    expect(window.structuredContent.next_start_ms).toBeNull();
    const first = await call(client, "get_transcript", { recording_id: recs.long });
    const chars = first.structuredContent.lines.reduce((n: number, l: { text: string }) => n + l.text.length, 0);
    expect(chars).toBeLessThanOrEqual(12_000);
    const next = first.structuredContent.next_start_ms;
    expect(next).toBe(first.structuredContent.lines.length * 10_000);
    const second = await call(client, "get_transcript", { recording_id: recs.long, start_ms: next });
    expect(second.structuredContent.lines[0].text).toStartWith(`Line ${first.structuredContent.lines.length} `);
  });

  test("the transcript resource is the whole transcript as timed lines", async () => {
    const client = await connect(adaKey);
    const read = await client.readResource({ uri: `parley://recordings/${recs.budget}/transcript` });
    const text = (read.contents[0] as { text: string }).text;
    expect(text.split("\n")).toHaveLength(BUDGET.length);
    expect(text).toContain("[0:12] SPEAKER_2: The marketing budget");
  });

  test("list_recordings pages newest first; get_summary returns the finished summary", async () => {
    const client = await connect(adaKey);
    const page = await call(client, "list_recordings", { limit: 1 });
    expect(page.structuredContent.recordings.map((r: { recording_id: string }) => r.recording_id)).toHaveLength(1);
    const rest = await call(client, "list_recordings", { limit: 10, cursor: page.structuredContent.next_cursor });
    const all = [...page.structuredContent.recordings, ...rest.structuredContent.recordings].map((r: { recording_id: string }) => r.recording_id);
    expect(all.sort()).toEqual([recs.budget, recs.long].sort());
    expect(rest.structuredContent.next_cursor).toBeNull();
    const summary = await call(client, "get_summary", { recording_id: recs.budget });
    expect(summary.isError).toBeFalsy();
    expect(summary.structuredContent).toMatchObject({ recording_id: recs.budget, template: "general" });
    expect(summary.structuredContent.text.length).toBeGreaterThan(0);
    expect(errorText(await call(client, "get_summary", { recording_id: recs.long }))).toBe(`not_found: Recording ${recs.long} has no completed summary yet.`);
  });

  test("every content read is in the audit log as the key's access", async () => {
    const client = await connect(adaKey);
    await call(client, "get_transcript", { recording_id: recs.long, start_ms: 0, end_ms: 10_000 });
    const events = await t.call("GET", `/v1/audit-events?resource_id=${recs.long}&action=transcription.read`, { key: acme.test });
    expect(events.status).toBe(200);
    expect(events.body.data.length).toBeGreaterThan(0);
    // The end-user-scoped key itself, not the project's secret key that created it.
    expect(events.body.data[0].actor).toMatchObject({ type: "secret", id: credentialIdOf(adaKey) });
  });
});

describe("what an assistant cannot reach", () => {
  test("another end user's recording is the API's not-found, by tool and by resource", async () => {
    const client = await connect(adaKey);
    for (const name of ["get_transcript", "get_summary"]) {
      const refused = await call(client, name, { recording_id: recs.bob });
      expect(errorText(refused)).toBe(`resource_not_found: No recording ${recs.bob}.`);
      expect(JSON.stringify(refused)).not.toContain("hiking");
    }
    const asked = await call(client, "ask", { question: "Where do we meet?", recording_ids: [recs.bob] });
    expect(asked.isError).toBe(true);
    expect(errorText(asked)).toContain(recs.bob);
    await expect(client.readResource({ uri: `parley://recordings/${recs.bob}/transcript` })).rejects.toThrow(`resource_not_found: No recording ${recs.bob}.`);
  });

  test("oversized or malformed arguments get a validation error naming the argument", async () => {
    const client = await connect(adaKey);
    expect(errorText(await call(client, "search_conversations", { query: "x".repeat(1001) }))).toContain("query");
    expect(errorText(await call(client, "search_conversations", { query: "budget", limit: 500 }))).toContain("limit");
    expect(errorText(await call(client, "get_transcript", { recording_id: recs.budget, start_ms: "soon" }))).toContain("start_ms");
    expect(errorText(await call(client, "list_recordings", { recorded_after: "yesterday" }))).toContain("recorded_after");
  });

  test("a secret key must name the end user; then it reaches that end user's recordings only", async () => {
    await expect(connect(acme.test)).rejects.toThrow(/end_user_id/);
    await expect(connect(acme.test, "?end_user_id=eu_nobody")).rejects.toThrow(/No end user eu_nobody/);
    await expect(connect(adaKey, `?end_user_id=${bob}`)).rejects.toThrow(/scoped to another end user/);
    const device = issueCredential(t.deps.db, {
      projectId: acme.project.id,
      mode: "test",
      kind: "device",
      endUserId: ada,
      deviceId: "dev_x",
      now: t.clock.now(),
    });
    await expect(connect(device.token)).rejects.toThrow(/A device token cannot use the MCP server/);
    const asBob = await connect(acme.test, `?end_user_id=${bob}`);
    const found = await call(asBob, "search_conversations", { query: "hiking boots trailhead" });
    const ids = found.structuredContent.results.map((r: { recording_id: string }) => r.recording_id);
    expect(ids.length).toBeGreaterThan(0);
    expect(new Set(ids)).toEqual(new Set([recs.bob]));
    expect(errorText(await call(asBob, "get_transcript", { recording_id: recs.budget }))).toBe(`resource_not_found: No recording ${recs.budget}.`);
  });

  test("a key without the scope is refused with the API's message; no key is a 401 with rate-limit headers", async () => {
    const readOnly = await connect(acme.key("test", { endUserId: ada, scopes: ["recordings:read"] }));
    expect(errorText(await call(readOnly, "get_transcript", { recording_id: recs.budget }))).toBe("forbidden: This key lacks the transcriptions:read scope.");
    const res = await fetch(`http://127.0.0.1:${server.port}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("x-ratelimit-limit")).toBe("1000");
    expect((await res.json()).error.code).toBe("unauthorized");
  });

  test("calls count against the key's rate limit as API requests do, and a refused one is the API's 429", async () => {
    const limited = await makeTestApp({ env: { PARLEY_RATE_LIMIT_PER_SECOND: "0", PARLEY_RATE_LIMIT_PER_MINUTE: "8" } });
    const tenant = makeTenant(limited.deps);
    const eve = (await limited.call("POST", "/v1/end-users", { key: tenant.test, body: { name: "Eve" } })).body.id;
    const own = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => limited.app.handle(req) });
    try {
      const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${own.port}/mcp?end_user_id=${eve}`), {
        requestInit: { headers: { authorization: `Bearer ${tenant.test}` } },
      });
      const client = new Client({ name: "test-assistant", version: "1.0.0" });
      // The clock stands still, so every request falls in one minute: the SDK's handshake takes a few, the rest are calls.
      await client.connect(transport);
      clients.push(client);
      let answered = 0;
      let refusal: unknown;
      while (refusal === undefined && answered < 8)
        await client.listTools().then(
          () => answered++,
          (err: unknown) => (refusal = err),
        );
      expect(answered).toBeGreaterThan(0);
      expect(String(refusal)).toContain('"code":"rate_limited","message":"Too many requests: the limit is 8 per minute."');
    } finally {
      own.stop(true);
    }
  });
});

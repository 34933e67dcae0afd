import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createApp } from "../../src/app";
import { buildDeps } from "../../src/boot";
import { ManualClock } from "../../src/clock";
import { loadConfig } from "../../src/config";
import type { Logger } from "../../src/log";
import { makeTempDir, makeTenant, waitFor } from "../helpers";

/**
 * Spec 2.6: a grant_token "must not be ... logged". The app runs at debug level (access
 * log mounted) with a logger that keeps every line unredacted, so the check does not lean
 * on the logger's masking of rct_ values; anything written straight to stderr is kept too.
 */
const lines: string[] = [];
const capture = (level: string) => (msg: string, fields?: Record<string, unknown>) => {
  lines.push(JSON.stringify({ level, msg, ...fields }));
};
const log: Logger = { debug: capture("debug"), info: capture("info"), warn: capture("warn"), error: capture("error") };

const writeStderr = process.stderr.write.bind(process.stderr);
let app: ReturnType<typeof createApp>;
let deps: ReturnType<typeof buildDeps>;

beforeAll(() => {
  const dataDir = makeTempDir();
  const config = loadConfig({ PARLEY_DATA_DIR: dataDir, PARLEY_MODELS_DIR: join(dataDir, "models"), PARLEY_LOG_LEVEL: "debug" });
  deps = buildDeps(config, { clock: new ManualClock(), log });
  app = createApp(deps);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    lines.push(String(chunk));
    return (writeStderr as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
});

afterAll(() => {
  process.stderr.write = writeStderr;
});

async function call(method: string, path: string, key: string, body?: unknown) {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await app.handle(new Request(`http://localhost${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }));
  return { status: res.status, body: (await res.json()) as any };
}

describe("grant tokens and reset credentials never reach the log (spec 2.6)", () => {
  test("command creation, heartbeat delivery, reset and its acknowledgement log requests but no grant_token or rct_", async () => {
    const key = makeTenant(deps, "logging-acme").test;
    const user = (await call("POST", "/v1/end-users", key, {})).body;
    const device = (await call("POST", "/v1/devices", key, { serial_number: "LOG-1", model: "parley_pin" })).body;
    const token: string = (await call("POST", `/v1/devices/${device.id}/bind`, key, { end_user_id: user.id })).body.device_token;
    const heartbeat = () => call("POST", `/v1/devices/${device.id}/heartbeat`, token, { channel: "wifi" });
    await heartbeat();

    const command = await call("POST", `/v1/devices/${device.id}/commands`, key, { type: "trigger_upload" });
    const reset = await call("POST", `/v1/devices/${device.id}/reset`, key);
    expect([command.status, reset.status]).toEqual([201, 201]);
    const delivered = (await heartbeat()).body.commands as { grant_token: string }[];
    expect(delivered.map((c) => c.grant_token)).toEqual([command.body.grant_token, reset.body.grant_token]);
    const rct: string = reset.body.grant_token;
    expect((await call("POST", `/v1/devices/${device.id}/commands/${reset.body.id}/complete`, rct, { status: "executed" })).status).toBe(200);
    // A refused second acknowledgement goes through the error path too.
    expect((await call("POST", `/v1/devices/${device.id}/commands/${reset.body.id}/complete`, rct, { status: "executed" })).status).toBe(409);

    // The access log writes after the response is handed back: wait for the last request's line.
    await waitFor("both acknowledgements logged", () => lines.filter((l) => l.includes(`/commands/${reset.body.id}/complete`)).length >= 2);
    const logged = lines.join("\n");
    expect(logged).toContain(`/v1/devices/${device.id}/reset`); // the capture works: requests are logged at debug
    for (const secret of [command.body.grant_token, rct, token]) expect(logged).not.toContain(secret);
    expect(logged).not.toContain("rct_");
    expect(logged).not.toContain("grant_token");
  });
});

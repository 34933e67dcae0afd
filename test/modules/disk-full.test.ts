// A real full disk: the data dir on a small tmpfs, a real `parley serve`, the volume
// filled to its last byte. Uploads are refused with 507 and keep their URL, reads keep
// working, the process stays up, a restart on the full disk comes back, and once space is
// freed the same upload goes through. Mounting needs root (CI runs as root); elsewhere the
// test is skipped with the reason printed.
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fixture, sha256 } from "./recordings-support";

const ROOT = join(import.meta.dir, "..", "..");
const BUN = process.execPath;
const mountPoint = mkdtempSync(join(tmpdir(), "parley-full-disk-"));
const dataDir = join(mountPoint, "data");
const filler = join(mountPoint, "filler");
const port = 20_000 + Math.floor(Math.random() * 20_000);
const base = `http://127.0.0.1:${port}`;
const MB = 1024 * 1024;

function mountTmpfs(): string | null {
  if (process.getuid?.() !== 0) return "not root, so no tmpfs can be mounted";
  const r = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=48m,mode=0700", "tmpfs", mountPoint]);
  return r.exitCode === 0 ? null : `mount failed: ${r.stderr.toString().trim()}`;
}
const skipReason = mountTmpfs();
if (skipReason) console.log(`disk-full test skipped: ${skipReason}`);

let server: ReturnType<typeof Bun.spawn> | null = null;
afterEach(async () => {
  if (server) await stop();
  rmSync(filler, { force: true });
});
afterAll(() => {
  if (!skipReason) Bun.spawnSync(["umount", "-l", mountPoint]);
  rmSync(mountPoint, { recursive: true, force: true });
});

const env = (floorMb: number) => ({
  ...process.env,
  PARLEY_DATA_DIR: dataDir,
  PARLEY_PORT: String(port),
  PARLEY_LOG_LEVEL: "silent",
  PARLEY_RATE_LIMIT_PER_SECOND: "0",
  PARLEY_RATE_LIMIT_PER_MINUTE: "0",
  PARLEY_MIN_FREE_MB: String(floorMb),
});

function cli(...args: string[]): string {
  const r = Bun.spawnSync([BUN, "src/cli.ts", ...args], { cwd: ROOT, env: env(0) });
  if (r.exitCode !== 0) throw new Error(`parley ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

async function start(floorMb: number): Promise<void> {
  server = Bun.spawn([BUN, "src/cli.ts", "serve"], { cwd: ROOT, env: env(floorMb), stdout: "ignore", stderr: "pipe" });
  for (;;) {
    if (server.exitCode !== null) throw new Error(`server exited ${server.exitCode}: ${await new Response(server.stderr as ReadableStream).text()}`);
    if (
      await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await Bun.sleep(50);
  }
}

async function stop(): Promise<void> {
  server!.kill(9);
  await server!.exited;
  server = null;
}

/** Writes the filler until the volume has no byte left (ENOSPC). */
function fillDisk(): void {
  const fd = openSync(filler, "a");
  const block = new Uint8Array(MB);
  try {
    for (let size = block.length; size >= 1; ) {
      try {
        writeSync(fd, block, 0, size);
      } catch {
        size = Math.floor(size / 2);
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** The bytes as a stream, so fetch sends them chunked, with no Content-Length. */
function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(c) {
      for (let i = 0; i < bytes.length; i += 16 * 1024) c.enqueue(bytes.slice(i, i + 16 * 1024));
      c.close();
    },
  });
}

const freeBytes = () => {
  const s = statfsSync(mountPoint);
  return s.bavail * s.bsize;
};

let key = "";
const api = (method: string, path: string, body?: unknown) =>
  fetch(`${base}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

beforeAll(() => {
  if (skipReason) return;
  cli("projects", "create", "full");
  key = JSON.parse(cli("keys", "create", "--project", "full", "--mode", "test", "--json")).key;
});

test.skipIf(skipReason !== null)(
  "a full disk refuses uploads with 507, keeps reads, survives a restart, and the same URL works once space is freed",
  async () => {
    await start(0);
    const audio = fixture("tone-3s.wav");
    const rec = await (await api("POST", "/recordings", { name: "before the disk filled" })).json();
    const { upload_url } = await (await api("POST", `/recordings/${rec.id}/upload-url`, { content_type: "audio/wav" })).json();

    fillDisk();
    expect(freeBytes()).toBe(0);

    // A Content-Length that cannot fit is refused before a byte is read.
    const upFront = await fetch(upload_url, { method: "PUT", body: audio, headers: { "content-type": "audio/wav" } });
    expect(upFront.status).toBe(507);
    expect((await upFront.json()).error.message).toContain("audio volume has 0 MB free");
    // A chunked body (no length up front) runs into ENOSPC: no 2xx for bytes that did not land; the error names the volume.
    const refused = await fetch(upload_url, { method: "PUT", body: streamOf(audio), headers: { "content-type": "audio/wav" } });
    expect(refused.status).toBe(507);
    expect(refused.headers.get("retry-after")).toBeTruthy();
    const error = (await refused.json()).error;
    expect(error.code).toBe("insufficient_storage");
    expect(error.message).toContain("audio volume is full");

    // Reads keep working and the process is still up.
    const read = await api("GET", `/recordings/${rec.id}`);
    expect(read.status).toBe(200);
    expect((await read.json()).status).toBe("pending");
    expect(server!.exitCode).toBeNull();
    const health = await (await fetch(`${base}/healthz`)).json();
    expect(health.storage.find((v: { volume: string }) => v.volume === "database")).toMatchObject({ free_bytes: 0, low: false });

    // A server started on the still-full disk comes back and serves reads.
    await stop();
    await start(0);
    expect((await api("GET", "/recordings")).status).toBe(200);

    // Space freed: the very same URL takes the file, and the upload completes.
    rmSync(filler);
    const put = await fetch(upload_url, { method: "PUT", body: streamOf(audio), headers: { "content-type": "audio/wav" } });
    expect(put.status).toBe(200);
    const done = await api("POST", `/recordings/${rec.id}/upload-complete`, { file_size_bytes: audio.length });
    expect(done.status).toBe(200);
    // Verified and kept (the pipeline may already have moved its status on).
    expect(await done.json()).toMatchObject({ sha256: sha256(audio), file_size_bytes: audio.length });
  },
);

test.skipIf(skipReason !== null)(
  "below PARLEY_MIN_FREE_MB new uploads are refused up front, naming the floor; the health endpoint says the volume is low",
  async () => {
    // A floor just above what is free now: nothing needs filling.
    const floorMb = Math.ceil(freeBytes() / MB) + 1;
    await start(floorMb);
    const rec = await (await api("POST", "/recordings", {})).json();
    const refused = await api("POST", `/recordings/${rec.id}/upload-url`, { file_size_bytes: 1000 });
    expect(refused.status).toBe(507);
    expect(refused.headers.get("retry-after")).toBeTruthy();
    expect((await refused.json()).error.message).toContain("PARLEY_MIN_FREE_MB");
    const health = await (await fetch(`${base}/healthz`)).json();
    expect(health.storage.some((v: { low: boolean }) => v.low)).toBe(true);
    // `parley doctor` says the same, as a failed check.
    const doctor = Bun.spawnSync([BUN, "src/cli.ts", "doctor", "--json"], { cwd: ROOT, env: env(floorMb) });
    const disk = JSON.parse(doctor.stdout.toString()).find((c: { check: string }) => c.check === "disk database");
    expect(disk).toMatchObject({ ok: false });
    expect(disk.detail).toContain("PARLEY_MIN_FREE_MB");
    expect((await api("GET", `/recordings/${rec.id}`)).status).toBe(200);
  },
);

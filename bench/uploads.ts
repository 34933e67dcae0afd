// Upload throughput and server memory: a PUT through the pre-signed URL of a real
// `parley serve` child vs writing the same bytes straight to disk (write + fsync) in the
// same run (medians of 3 interleaved rounds), and the server's peak RSS over the rounds of
// a 50 MB and a 200 MB upload. A bare Bun.serve that discards the body shows
// the loopback HTTP ceiling the same client reaches, to tell HTTP cost from storage cost.
// Run: node_modules/.bin/bun bench/uploads.ts [sizes in MB, default 50,200]
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const BUN = process.execPath;
const MB = 1024 * 1024;
const sizes = (process.argv[2] ?? "50,200").split(",").map(Number);
const block = new Uint8Array(MB).map((_, i) => (i * 31) & 0xff);
const ROUNDS = 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function body(totalMb: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(c) {
      if (sent++ < totalMb) c.enqueue(block);
      else c.close();
    },
  });
}

function kb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(new RegExp(`${field}:\\s+(\\d+) kB`));
  return Number(line?.[1] ?? 0);
}

async function diskWrite(dir: string, totalMb: number): Promise<number> {
  const started = performance.now();
  const file = await open(join(dir, "direct.bin"), "w");
  for (let i = 0; i < totalMb; i++) await file.write(block);
  await file.sync();
  await file.close();
  return totalMb / ((performance.now() - started) / 1000);
}

/** The loopback HTTP ceiling: a bare Bun.serve child that reads and discards the body, same client. */
async function bareHttp(totalMb: number): Promise<number> {
  const port = 30_000 + Math.floor(Math.random() * 20_000);
  const code = `Bun.serve({ port: ${port}, hostname: "127.0.0.1", maxRequestBodySize: 2 ** 40, async fetch(req) {
    if (!req.body) return new Response("0"); const r = req.body.getReader(); let n = 0; for (let x = await r.read(); !x.done; x = await r.read()) n += x.value.byteLength;
    return new Response(String(n)); } });`;
  const child = Bun.spawn([BUN, "-e", code], { stdout: "ignore", stderr: "inherit" });
  try {
    for (let i = 0; i < 200; i++) {
      if (
        await fetch(`http://127.0.0.1:${port}/`, { method: "PUT", body: "" }).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      await Bun.sleep(50);
    }
    const rates: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const started = performance.now();
      await (await fetch(`http://127.0.0.1:${port}/`, { method: "PUT", body: body(totalMb), duplex: "half" } as RequestInit)).text();
      rates.push(totalMb / ((performance.now() - started) / 1000));
    }
    return median(rates);
  } finally {
    child.kill();
    await child.exited;
  }
}

async function serverUpload(totalMb: number) {
  const dataDir = mkdtempSync(join(tmpdir(), "parley-bench-"));
  const port = 30_000 + Math.floor(Math.random() * 20_000);
  const env = {
    ...process.env,
    PARLEY_DATA_DIR: dataDir,
    PARLEY_PORT: String(port),
    PARLEY_LOG_LEVEL: "silent",
    PARLEY_RATE_LIMIT_PER_SECOND: "0",
    PARLEY_RATE_LIMIT_PER_MINUTE: "0",
  };
  const cli = (...args: string[]) => Bun.spawnSync([BUN, "src/cli.ts", ...args], { cwd: ROOT, env }).stdout.toString();
  cli("projects", "create", "bench");
  const key = JSON.parse(cli("keys", "create", "--project", "bench", "--mode", "test", "--json")).key;
  const server = Bun.spawn([BUN, "src/cli.ts", "serve"], { cwd: ROOT, env, stdout: "ignore", stderr: "inherit" });
  try {
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 200; i++) {
      if (
        await fetch(`${base}/healthz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      await Bun.sleep(50);
    }
    const api = async (path: string, b: unknown) =>
      (
        await fetch(`${base}/v1${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify(b),
        })
      ).json();
    const rssBefore = kb(server.pid, "VmRSS");
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, kb(server.pid, "VmRSS"))), 20);
    const puts: number[] = [];
    const directs: number[] = [];
    // Interleaved rounds, medians reported: the machine is shared, single runs swing widely.
    for (let round = 0; round < ROUNDS; round++) {
      directs.push(await diskWrite(dataDir, totalMb));
      const rec = await api("/recordings", {});
      const { upload_url } = await api(`/recordings/${rec.id}/upload-url`, {});
      const started = performance.now();
      const res = await fetch(upload_url, { method: "PUT", body: body(totalMb), duplex: "half" } as RequestInit);
      const receipt = await res.json();
      puts.push(totalMb / ((performance.now() - started) / 1000));
      if (receipt.file_size_bytes !== totalMb * MB) throw new Error(`upload failed: ${JSON.stringify(receipt)}`);
    }
    clearInterval(sampler);
    return { put: median(puts), direct: median(directs), rssBeforeMb: rssBefore / 1024, peakMb: Math.max(peak, kb(server.pid, "VmHWM")) / 1024 };
  } finally {
    server.kill();
    await server.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

console.log("size    PUT MB/s  disk MB/s  ratio  bare-HTTP MB/s  PUT/bare  server RSS before -> peak (MB)");
for (const size of sizes) {
  const r = await serverUpload(size);
  const bare = await bareHttp(size);
  console.log(
    `${String(size).padStart(4)} MB ${r.put.toFixed(0).padStart(9)} ${r.direct.toFixed(0).padStart(10)} ${(r.put / r.direct).toFixed(2).padStart(6)}x ${bare.toFixed(0).padStart(15)} ${(r.put / bare).toFixed(2).padStart(8)}x  ${r.rssBeforeMb.toFixed(0)} -> ${r.peakMb.toFixed(0)}`,
  );
}

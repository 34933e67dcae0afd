// bench/encryption.ts: audio sealed at rest (decision 105) against plain local storage in the
// same run: writing a 64 MiB object, reading it whole, and 200 random 64 KiB ranges.
// Usage: bun bench/encryption.ts [MiB, default 64]
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildDeps, closeDeps } from "../src/boot";
import { loadConfig } from "../src/config";
import { createProject } from "../src/modules/projects/service";
import { chunksOf, type Storage } from "../src/storage";
import { LocalStorage } from "../src/storage/local";

const mib = Number(process.argv[2] ?? 64);
const dataDir = mkdtempSync(join(tmpdir(), "parley-bench-enc-"));
const deps = buildDeps(loadConfig({ PARLEY_DATA_DIR: dataDir, PARLEY_LOG_LEVEL: "silent" }));
const project = createProject(deps.db, "bench", deps.clock.now());
const payload = randomBytes(mib * 1024 * 1024);

async function* body() {
  for (let i = 0; i < payload.length; i += 256 * 1024) yield payload.subarray(i, i + 256 * 1024);
}
async function drain(stream: ReadableStream<Uint8Array>) {
  let n = 0;
  for await (const p of chunksOf(stream)) n += p.length;
  return n;
}
async function timed(fn: () => Promise<unknown>) {
  const t0 = performance.now();
  await fn();
  return (performance.now() - t0) / 1000;
}

async function measure(name: string, storage: Storage, key: string) {
  const write = await timed(() => storage.write(key, body()));
  const read = await timed(() => drain(storage.read(key)));
  const ranges = await timed(async () => {
    for (let i = 0; i < 200; i++) {
      const start = Math.floor(Math.random() * (payload.length - 65536));
      await drain(storage.read(key, { start, end: start + 65535 }));
    }
  });
  return { name, write: mib / write, read: mib / read, rangesPerSecond: 200 / ranges };
}

try {
  const plain = await measure("plain", new LocalStorage(join(dataDir, "audio-plain")), `${project.id}/test/rec_bench/plain`);
  const sealed = await measure("sealed", deps.storage, `${project.id}/test/rec_bench/sealed`);
  for (const m of [plain, sealed])
    console.log(`${m.name.padEnd(7)} write ${m.write.toFixed(0)} MiB/s  read ${m.read.toFixed(0)} MiB/s  64 KiB ranges ${m.rangesPerSecond.toFixed(0)}/s`);
  console.log(
    `sealed/plain: write ${(sealed.write / plain.write).toFixed(2)}x  read ${(sealed.read / plain.read).toFixed(2)}x  ranges ${(sealed.rangesPerSecond / plain.rangesPerSecond).toFixed(2)}x`,
  );
} finally {
  closeDeps(deps);
  rmSync(dataDir, { recursive: true, force: true });
}

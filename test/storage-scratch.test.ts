// Plaintext working files (decision 226): under <dataDir>/tmp, in a dir of the process's own,
// and what a process killed mid-file left is removed by the next process on the data dir,
// never what a live one is using.
import { expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { buildDeps, closeDeps } from "../src/boot";
import { loadConfig } from "../src/config";
import { createLogger } from "../src/log";
import { Scratch, scratchRoot } from "../src/storage/scratch";
import { makeTempDir } from "./helpers";

const SCRATCH = join(import.meta.dir, "..", "src", "storage", "scratch.ts");

/** A process that writes `secret` to a scratch file under `root`, says where, and waits there until killed. */
async function holdingAFile(root: string): Promise<{ path: string; kill: () => Promise<void> }> {
  const script = `
    import { Scratch } from ${JSON.stringify(SCRATCH)};
    await new Scratch(${JSON.stringify(root)}).withDir(async (dir) => {
      await Bun.write(dir + "/plaintext", "secret");
      console.log(dir + "/plaintext");
      await new Promise(() => {});
    });
  `;
  const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "inherit" });
  const reader = proc.stdout.getReader();
  let out = "";
  while (!out.includes("\n")) {
    const r = await reader.read();
    if (r.done) throw new Error(`the holding process exited ${await proc.exited}`);
    out += new TextDecoder().decode(r.value);
  }
  return {
    path: out.trim(),
    kill: async () => {
      proc.kill(9);
      await proc.exited;
    },
  };
}

test("a killed process's scratch files are swept; a live process's, this one's among them, are not", async () => {
  const root = join(makeTempDir(), "tmp");
  const killed = await holdingAFile(root);
  const alive = await holdingAFile(root);
  const own = new Scratch(root);
  await own.withDir(async (dir) => {
    await killed.kill();
    expect(existsSync(killed.path)).toBe(true);
    expect(new Scratch(root).sweepEnded()).toBe(1);
    expect(existsSync(killed.path)).toBe(false);
    // The live process's file, and the one this Scratch is using, stay.
    expect(existsSync(alive.path)).toBe(true);
    expect(own.sweepEnded()).toBe(0);
    expect(existsSync(dir)).toBe(true);
  });
  await alive.kill();
  own.close();
  expect(new Scratch(root).sweepEnded()).toBe(1);
  expect(readdirSync(root)).toEqual([]);
});

test("the next process on the data dir removes the plaintext a killed one left, before anything runs", async () => {
  const dataDir = makeTempDir();
  const killed = await holdingAFile(scratchRoot(dataDir));
  await killed.kill();
  const deps = buildDeps(loadConfig({ PARLEY_DATA_DIR: dataDir, PARLEY_LOG_LEVEL: "silent" }), { log: createLogger("silent") });
  try {
    expect(readdirSync(scratchRoot(dataDir))).toEqual([]);
  } finally {
    closeDeps(deps);
  }
});

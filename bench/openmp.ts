// bench/openmp.ts: what libgomp's idle spinning costs whisper.cpp (decision 201). The same
// greedy transcription of a 20 s clip (base.en-shaped stand-in, Parley's addon, 2 threads) in
// fresh processes, interleaved: libgomp's default spin count (GOMP_SPINCOUNT=300000, set as
// an operator would) against Parley's (none set: the addon's loader sets 1000), first on the
// box as it is, then with --busy N processes burning a core each beside it (another model,
// live streams, an operator's job). Prints medians and the ratio; run on a quiet box for the
// first row to mean "idle". Usage: bun bench/openmp.ts [--rounds 3] [--busy 2]
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values: flags } = parseArgs({ options: { rounds: { type: "string", default: "3" }, busy: { type: "string", default: "2" } } });
const child = join(import.meta.dir, "support", "transcribe-clip.ts");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function transcribe(env: Record<string, string>): Promise<number[]> {
  const proc = Bun.spawn([process.execPath, child, "2"], { env: { ...process.env, ...env }, stdout: "pipe", stderr: "inherit" });
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error("the transcription process failed");
  return JSON.parse(out.trim().split("\n").at(-1)!) as number[];
}

async function row(label: string) {
  const times = { libgomp: [] as number[], parley: [] as number[] };
  for (let i = 0; i < Number(flags.rounds); i++) {
    times.libgomp.push(...(await transcribe({ GOMP_SPINCOUNT: "300000" })));
    times.parley.push(...(await transcribe({})));
  }
  const [a, b] = [median(times.libgomp), median(times.parley)];
  console.log(`${label} (load ${loadavg()[0]!.toFixed(1)}): libgomp default ${a.toFixed(2)} s, Parley's ${b.toFixed(2)} s: ${(b / a).toFixed(2)}x the time`);
  console.log(`  runs: libgomp ${times.libgomp.map((t) => t.toFixed(2)).join(" ")} | Parley ${times.parley.map((t) => t.toFixed(2)).join(" ")}`);
}

await row("box as it is");
const burners = Array.from({ length: Number(flags.busy) }, () => Bun.spawn(["sh", "-c", "while :; do :; done"]));
try {
  await row(`with ${burners.length} busy processes`);
} finally {
  for (const b of burners) b.kill();
}

/** A small closed-loop HTTP load generator over loopback: bounded in time, prints nothing itself. */
export type LoadResult = { requests: number; errors: number; perSecond: number; p50Ms: number; p99Ms: number };

export async function runLoad(makeRequest: () => Request, options: { seconds: number; concurrency: number }): Promise<LoadResult> {
  return summarize(await measure(makeRequest, options));
}

type Sample = { latencies: number[]; errors: number; elapsedSeconds: number };

/**
 * A baseline and the endpoint compared with it, measured in alternating slices (rounds of
 * seconds/rounds each) and each side's slices pooled: on a shared machine whose speed drifts
 * from one second to the next, both sides then see the same machine.
 */
export async function runBeside(
  baseline: () => Request,
  subject: () => Request,
  options: { seconds: number; concurrency: number; rounds?: number },
): Promise<{ baseline: LoadResult; subject: LoadResult }> {
  const rounds = options.rounds ?? 5;
  const slice = { seconds: options.seconds / rounds, concurrency: options.concurrency };
  const pooled = { baseline: emptySample(), subject: emptySample() };
  for (let round = 0; round < rounds; round++) {
    addSample(pooled.baseline, await measure(baseline, slice));
    addSample(pooled.subject, await measure(subject, slice));
  }
  return { baseline: summarize(pooled.baseline), subject: summarize(pooled.subject) };
}

const emptySample = (): Sample => ({ latencies: [], errors: 0, elapsedSeconds: 0 });

function addSample(into: Sample, slice: Sample): void {
  for (const l of slice.latencies) into.latencies.push(l);
  into.errors += slice.errors;
  into.elapsedSeconds += slice.elapsedSeconds;
}

async function measure(makeRequest: () => Request, options: { seconds: number; concurrency: number }): Promise<Sample> {
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + options.seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      const res = await fetch(makeRequest()).catch(() => null);
      if (!res || res.status >= 400) errors++;
      await res?.arrayBuffer();
      latencies.push(performance.now() - t0);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return { latencies, errors, elapsedSeconds: (performance.now() - started) / 1000 };
}

function summarize({ latencies, errors, elapsedSeconds }: Sample): LoadResult {
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { requests: latencies.length, errors, perSecond: latencies.length / elapsedSeconds, p50Ms: at(0.5), p99Ms: at(0.99) };
}

/** Starts a bun child process and waits until `url` answers. */
export async function startServer(args: string[], env: Record<string, string>, url: string) {
  const proc = Bun.spawn([process.execPath, ...args], { env: { ...process.env, ...env }, stdout: "ignore", stderr: "ignore" });
  for (let i = 0; i < 200; i++) {
    if (
      await fetch(url).then(
        () => true,
        () => false,
      )
    )
      return proc;
    await Bun.sleep(50);
  }
  proc.kill();
  throw new Error(`server did not start: ${args.join(" ")}`);
}

export function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

export function fmt(r: LoadResult): string {
  return `${r.perSecond.toFixed(0).padStart(7)} req/s  p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms.toFixed(2)} ms  (${r.requests} requests, ${r.errors} errors)`;
}

/**
 * Starts the two servers every API bench compares: a bare Elysia hello-world and
 * `parley serve` on `dataDir` with rate limits off. stop() ends both.
 */
export async function startBenchServers(dataDir: string) {
  const helloPort = freePort();
  const parleyPort = freePort();
  const hello = await startServer([`${import.meta.dir}/hello-world.ts`, String(helloPort)], {}, `http://127.0.0.1:${helloPort}/`);
  const parley = await startServer(
    [`${import.meta.dir}/../../src/cli.ts`, "serve"],
    {
      PARLEY_DATA_DIR: dataDir,
      PARLEY_PORT: String(parleyPort),
      PARLEY_LOG_LEVEL: "error",
      PARLEY_RATE_LIMIT_PER_SECOND: "0",
      PARLEY_RATE_LIMIT_PER_MINUTE: "0",
    },
    `http://127.0.0.1:${parleyPort}/healthz`,
  );
  return {
    helloUrl: `http://127.0.0.1:${helloPort}/`,
    parleyUrl: `http://127.0.0.1:${parleyPort}/v1`,
    async stop() {
      hello.kill();
      parley.kill();
      await Promise.all([hello.exited, parley.exited]);
    },
  };
}

// A PUT that a wearable on a weak link makes: 16 KB at once, then 1 KB every 50 ms, for minutes.

/** Starts the trickling PUT to `url`; `status` is its answer's status (or the error), `stop` ends the trickle. */
export function tricklingPut(url: string): { status: Promise<number | Error>; stop(): void } {
  let trickle: ReturnType<typeof setInterval> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new Uint8Array(16 * 1024).fill(1));
      trickle = setInterval(() => c.enqueue(new Uint8Array(1024).fill(2)), 50);
    },
    cancel: () => clearInterval(trickle),
  });
  const status = fetch(url, { method: "PUT", body, duplex: "half" } as RequestInit).then(
    (r) => r.status,
    (e: Error) => e,
  );
  return { status, stop: () => clearInterval(trickle) };
}

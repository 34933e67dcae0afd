import type { Job } from "../../jobs/queue";

/** A job ran past its time limit (spec 6 failure code timeout). */
export class TimeLimitError extends Error {}

export type TimeLimit = {
  signal: AbortSignal;
  /** Moves the deadline to `ms` of running time after the start (once the audio length, and so the fair limit, is known). */
  setLimit(ms: number): void;
  /**
   * Stops the clock while `wait` is pending. Engines run one call at a time, so a job can
   * queue behind another job's call; that time is not its own and must not spend its limit.
   * The wait is bounded: the call ahead runs under its own job's limit.
   */
  excludeWait<W>(wait: Promise<W>): Promise<W>;
};

/**
 * Runs `fn` against a deadline on its running time: the signal aborts at the deadline and
 * the result rejects with TimeLimitError even when an engine ignores the signal, so a hung
 * model never holds a job forever. `cancel` (the job's own signal: the server stopping)
 * ends it the same way at once, rejecting with its reason.
 */
export async function withTimeLimit<T>(initialMs: number, fn: (limit: TimeLimit) => Promise<T>, cancel?: AbortSignal): Promise<T> {
  const controller = new AbortController();
  let startedAt = Date.now();
  let limitMs = initialMs;
  let waits = 0;
  let waitingSince = 0;
  let finished = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let expire: (err: Error) => void = () => {};
  const expired = new Promise<never>((_, reject) => {
    expire = reject;
  });
  const arm = () => {
    clearTimeout(timer);
    if (finished || waits > 0) return;
    timer = setTimeout(
      () => {
        const err = new TimeLimitError(`Processing did not finish within ${Math.round(limitMs / 1000)} s.`);
        controller.abort(err);
        expire(err);
      },
      Math.max(0, startedAt + limitMs - Date.now()),
    );
  };
  const setLimit = (ms: number) => {
    limitMs = ms;
    arm();
  };
  const excludeWait = <W>(wait: Promise<W>): Promise<W> => {
    if (waits++ === 0) {
      waitingSince = Date.now();
      clearTimeout(timer);
    }
    return wait.finally(() => {
      if (--waits > 0) return;
      startedAt += Date.now() - waitingSince;
      arm();
    });
  };
  const stop = () => {
    controller.abort(cancel!.reason);
    expire(cancel!.reason);
  };
  if (cancel?.aborted) stop();
  cancel?.addEventListener("abort", stop, { once: true });
  arm();
  try {
    return await Promise.race([fn({ signal: controller.signal, setLimit, excludeWait }), expired]);
  } catch (err) {
    // An engine that honours the signal rejects with its own abort error: it is still a timeout (or the cancel).
    throw controller.signal.aborted ? controller.signal.reason : err;
  } finally {
    finished = true;
    clearTimeout(timer);
    cancel?.removeEventListener("abort", stop);
  }
}

/** The limit for work on `audioSeconds` of audio: a fixed allowance plus a multiple of its length. */
export function limitFor(processing: { minSeconds: number; timeFactor: number }, audioSeconds: number): number {
  return (processing.minSeconds + processing.timeFactor * audioSeconds) * 1000;
}

/**
 * The processing handlers record every error on their record and never throw, so a job on
 * its last attempt died mid-run on every earlier one (the process crashed or was killed,
 * e.g. by a model that runs out of memory on this file). It is then failed, not retried.
 */
export function diedTooOften(job: Job): string | null {
  if (job.attempts < job.maxAttempts) return null;
  return `Processing was interrupted ${job.attempts - 1} times without finishing (the worker crashed or was stopped); giving up.`;
}

/** Passes a wait for earlier calls to a job's time limit, which leaves it out (TimeLimit.excludeWait). */
export type ExcludeWait = <W>(wait: Promise<W>) => Promise<W>;

/**
 * Calls in order of arrival, one at a time. A model context decodes one stream at a time, so
 * each engine takes turns on its own; and the local engines share one set of turns for
 * background work (transcription, summaries, redaction's model pass), because each call uses
 * every core and two at once spin against each other in ggml's barriers (decision 110).
 */
export class Turns {
  private last: Promise<unknown> = Promise.resolve();

  /** Runs `fn` once every call taken before it has settled, whether it succeeded or not. */
  take<T>(fn: () => Promise<T>, excludeWait?: ExcludeWait): Promise<T> {
    const turn = excludeWait ? excludeWait(this.last) : this.last;
    const run = turn.then(fn);
    this.last = run.catch(() => {});
    return run;
  }
}

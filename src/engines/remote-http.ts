import type { ExcludeWait } from "./turns";

/** One remote model engine as configured: PARLEY_TRANSCRIBER_*, PARLEY_EMBEDDER_* or PARLEY_OPENAI_*. */
export type RemoteEndpoint = {
  /** Base URL including the API prefix, as servers document it: http://gpu-box:8000/v1. */
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** One attempt's limit; a retry gets a fresh one. */
  timeoutMs: number;
};

/** How every remote engine treats the server: calls in flight at once, and the waits before each retry. */
export type RemotePolicy = { concurrency: number; retryDelaysMs: readonly number[] };

/**
 * A remote engine that gave no usable answer, named for the job's error (processing_error):
 * which server, what it answered (its HTTP status when it answered), after how many attempts.
 */
export class RemoteEngineError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

/** Statuses worth another attempt: the server is busy, restarting or behind a proxy that timed out. */
const RETRIABLE = new Set([408, 409, 425, 429, 500, 502, 503, 504]);

/** Calls in flight to one server, at most `limit`; the rest wait in order of arrival. */
export class Slots {
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(fn: () => Promise<T>, excludeWait?: ExcludeWait, signal?: AbortSignal): Promise<T> {
    if (this.inFlight >= this.limit) {
      const turn = new Promise<void>((resolve, reject) => {
        const take = () => {
          signal?.removeEventListener("abort", leave);
          resolve();
        };
        const leave = () => {
          this.waiting.splice(this.waiting.indexOf(take), 1);
          reject(signal?.reason);
        };
        this.waiting.push(take);
        signal?.addEventListener("abort", leave, { once: true });
      });
      // Queueing behind other jobs' calls is not this job's time (decision 110's rule, kept for remote engines).
      await (excludeWait ? excludeWait(turn) : turn);
    } else this.inFlight++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.inFlight--;
    }
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", stop, { once: true });
  });
}

export type RemoteRequest = {
  /** Path under the base URL: /audio/transcriptions, /embeddings, /chat/completions. */
  path: string;
  body: BodyInit;
  contentType?: string;
  /** The job's signal (its time limit, the server stopping): ends waits and the attempt in flight. */
  signal?: AbortSignal;
  excludeWait?: ExcludeWait;
  /** A person waits (Ask): one attempt, no backoff; they can ask again. */
  once?: boolean;
};

/** What the server said, for callers that treat some refusals themselves (a chat server without JSON-schema output). */
export type RemoteAnswer = { status: number; text: string };

/**
 * HTTP to one OpenAI-compatible engine: at most `concurrency` calls in flight (a GPU server
 * batches them), each attempt under the engine's timeout, and a refused connection, a
 * timeout, 429 or 5xx retried after each of `retryDelaysMs` in turn. The job's own time
 * limit ends the retries sooner. Other answers are returned as they are.
 */
export class RemoteClient {
  private readonly slots: Slots;

  constructor(
    /** The engine's name in messages: "transcription", "embedding", "LLM". */
    readonly engine: string,
    readonly endpoint: RemoteEndpoint,
    private readonly policy: RemotePolicy,
  ) {
    this.slots = new Slots(policy.concurrency);
  }

  get url(): string {
    return this.endpoint.baseUrl.replace(/\/$/, "");
  }

  /** The answer's status and body (2xx or a 4xx not worth retrying); RemoteEngineError when no answer came or retries ran out. */
  async post(request: RemoteRequest): Promise<RemoteAnswer> {
    const delays = request.once ? [] : this.policy.retryDelaysMs;
    let cause = "";
    let status: number | null = null;
    for (let attempt = 0; ; attempt++) {
      request.signal?.throwIfAborted();
      const answer = await this.slots
        .run(() => this.attempt(request), request.excludeWait, request.signal)
        .catch((err: Error) => {
          // The job's own end is not the server's failure: the caller sees the job's reason.
          request.signal?.throwIfAborted();
          return err;
        });
      if (!(answer instanceof Error) && !RETRIABLE.has(answer.status)) return answer;
      if (answer instanceof Error) {
        status = null;
        cause = answer.name === "TimeoutError" ? `did not answer within ${this.endpoint.timeoutMs} ms` : `could not be reached (${answer.message})`;
      } else {
        status = answer.status;
        cause = `answered ${answer.status}: ${answer.text.slice(0, 200)}`;
      }
      if (attempt >= delays.length) {
        const attempts = attempt + 1;
        throw new RemoteEngineError(`The ${this.engine} server at ${this.url} ${cause} (${attempts} attempt${attempts > 1 ? "s" : ""}).`, status);
      }
      await sleep(delays[attempt]!, request.signal);
    }
  }

  private async attempt(request: RemoteRequest): Promise<RemoteAnswer> {
    const timeout = AbortSignal.timeout(this.endpoint.timeoutMs);
    const { apiKey } = this.endpoint;
    const res = await fetch(`${this.url}${request.path}`, {
      method: "POST",
      headers: { ...(request.contentType ? { "content-type": request.contentType } : {}), ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
      body: request.body,
      signal: request.signal ? AbortSignal.any([request.signal, timeout]) : timeout,
      // Bun drops a connection idle for 5 minutes by default: a long transcription is answered after more.
      timeout: this.endpoint.timeoutMs,
    });
    return { status: res.status, text: await res.text() };
  }

  /** The JSON body of a 2xx answer; RemoteEngineError naming the status otherwise. */
  async postJson<T>(request: RemoteRequest): Promise<T> {
    const answer = await this.post(request);
    return this.json<T>(answer);
  }

  json<T>(answer: RemoteAnswer): T {
    if (answer.status < 200 || answer.status > 299)
      throw new RemoteEngineError(`The ${this.engine} server at ${this.url} answered ${answer.status}: ${answer.text.slice(0, 200)}`, answer.status);
    try {
      return JSON.parse(answer.text) as T;
    } catch {
      throw new RemoteEngineError(`The ${this.engine} server at ${this.url} answered with a body that is not JSON.`, answer.status);
    }
  }
}

import { ApiError } from "../../http/errors";

/*
 * The transport of a PUT to an upload URL (step 2 of the upload flow, upload-receive.ts):
 * the slots that bound how many run at once, and the body read at a minimum rate.
 */

/**
 * PUTs in progress: at most `limits.project` per project (spec 8: 10 concurrent uploads), at
 * most `limits.device` of them for one device's recordings (so one device, or a stolen device
 * token, cannot take all of a project's slots: decision 115), and one per upload URL, since
 * a URL is spent only when its bytes are stored. In memory: one process serves a data dir
 * (it is locked), and a crash ends every upload it was counting. One per Deps (boot.ts).
 */
export class UploadSlots {
  private inUse = new Map<string, number>();
  private urlsInUse = new Set<string>();
  constructor(private limits: { project: number; device: number }) {}
  take(projectId: string, deviceId: string | null, credentialId: string): () => void {
    if (this.urlsInUse.has(credentialId)) throw new ApiError("resource_conflict", "Another PUT to this upload URL is in progress; wait for its answer.");
    const busy = (what: string, limit: number) =>
      new ApiError("too_many_uploads", `At most ${limit} uploads may run at once per ${what}; retry when one finishes.`, { headers: { "retry-after": "1" } });
    const projectKey = `project:${projectId}`;
    const deviceKey = deviceId === null ? null : `device:${projectId}:${deviceId}`;
    if ((this.inUse.get(projectKey) ?? 0) >= this.limits.project) throw busy("project", this.limits.project);
    if (deviceKey && (this.inUse.get(deviceKey) ?? 0) >= this.limits.device) throw busy("device", this.limits.device);
    const keys = deviceKey ? [projectKey, deviceKey] : [projectKey];
    for (const k of keys) this.inUse.set(k, (this.inUse.get(k) ?? 0) + 1);
    this.urlsInUse.add(credentialId);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.urlsInUse.delete(credentialId);
      for (const k of keys) {
        const left = (this.inUse.get(k) ?? 1) - 1;
        if (left) this.inUse.set(k, left);
        else this.inUse.delete(k);
      }
    };
  }
}

/** The least a PUT's body must bring per window (config.uploads); 0 bytes per second: no floor. */
export type BodyRate = { minBytesPerSecond: number; windowMs: number };

/**
 * Reads a body while timing it: when a window of `rate.windowMs` brings fewer bytes than the
 * floor, the body is cancelled and the next read throws 408 request_timeout, so a trickling
 * client cannot hold an upload slot for the whole idle timeout (decision 115). Windows are
 * counted from the first read, on the wall clock (the network's time, not the app's clock).
 */
function timedReader(reader: ReadableStreamDefaultReader<Uint8Array>, rate: BodyRate) {
  const floor = (rate.minBytesPerSecond * rate.windowMs) / 1000;
  let inWindow = 0;
  let tooSlow = false;
  const timer =
    floor > 0
      ? setInterval(() => {
          if (inWindow < floor) {
            tooSlow = true;
            clearInterval(timer);
            void reader.cancel().catch(() => {});
          }
          inWindow = 0;
        }, rate.windowMs)
      : undefined;
  return {
    async read() {
      const r = await reader.read();
      if (tooSlow) {
        throw new ApiError(
          "request_timeout",
          `The upload was dropped: it sent less than ${rate.minBytesPerSecond} bytes per second over ${rate.windowMs / 1000} s. The URL is still usable: PUT the file again.`,
          {
            headers: { connection: "close" },
          },
        );
      }
      if (!r.done) inWindow += r.value.byteLength;
      return r;
    },
    stop: () => clearInterval(timer),
    release: () => reader.releaseLock(),
  };
}

/**
 * The body as chunks, or null when it is empty (no Content-Length says so up front with
 * chunked encoding); reading it throws 408 when it comes in slower than `rate`. Call `stop`
 * once done with it, read to the end or not.
 */
export async function nonEmptyBody(request: Request, rate: BodyRate): Promise<{ chunks: AsyncGenerator<Uint8Array> | null; stop: () => void }> {
  const raw = request.body?.getReader();
  if (!raw) return { chunks: null, stop: () => {} };
  const reader = timedReader(raw, rate);
  try {
    let first = await reader.read();
    while (!first.done && first.value.byteLength === 0) first = await reader.read();
    if (first.done) {
      reader.stop();
      reader.release();
      return { chunks: null, stop: () => {} };
    }
    const head = first.value;
    const chunks = (async function* () {
      try {
        yield head;
        for (let r = await reader.read(); !r.done; r = await reader.read()) yield r.value;
      } finally {
        reader.stop();
        reader.release();
      }
    })();
    return { chunks, stop: reader.stop };
  } catch (err) {
    reader.stop();
    throw err;
  }
}

import type { Server } from "bun";
import { settledWithin } from "../deadline";
import type { Logger } from "../log";

/**
 * Stops listening at once, gives the requests in flight up to `graceMs` to finish, then
 * closes the connections still open. A request cut off was never answered, so its client
 * retries it (an upload cut off is not acknowledged and leaves no audio behind).
 */
export async function drainRequests(server: Server<unknown>, graceMs: number, log: Logger): Promise<void> {
  if (await settledWithin(server.stop(), graceMs)) return;
  log.warn("shutdown: requests still in flight at the end of the grace period were cut off", { requests: server.pendingRequests, grace_ms: graceMs });
  await server.stop(true);
}

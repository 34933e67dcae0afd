import type { Deps } from "../../deps";
import { purgeFinishedDeliveries } from "./delivery-store";

// Webhook delivery runs beside the job queue, not on it: its attempts wait on remote
// servers for up to the timeout, and they must neither take the queue's few slots from
// transcriptions nor wait behind them. A sweep every second, plus a wake-up per event.

/** A sweep of due deliveries (every second, src/background.ts). */
export const dispatchWebhooks = (deps: Pick<Deps, "webhooks">) => () => deps.webhooks.tick();

/** Delivered and dead deliveries past their keeping time go (daily). */
export const purgeDeliveries = (deps: Pick<Deps, "db" | "clock">) => () => void purgeFinishedDeliveries(deps.db, deps.clock.now());

/** The wake-up per committed event: the dispatcher starts at once instead of at the next sweep. */
export function wakeOnEvents(deps: Pick<Deps, "events" | "webhooks">): void {
  deps.events.onRecorded(() => deps.webhooks.kick());
}

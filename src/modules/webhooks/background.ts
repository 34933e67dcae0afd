import type { Deps } from "../../deps";
import type { PeriodicTask } from "../../jobs/scheduler";
import { purgeFinishedDeliveries } from "./delivery-store";

/**
 * Webhook delivery runs beside the job queue, not on it: its attempts wait on remote
 * servers for up to the timeout, and they must neither take the queue's few slots from
 * transcriptions nor wait behind them. A sweep every second, plus a wake-up per event.
 */
export function registerWebhookWork(deps: Deps): PeriodicTask[] {
  const dispatcher = deps.webhooks;
  deps.events.onRecorded(() => dispatcher.kick());
  return [
    { name: "webhooks-dispatch", pattern: "* * * * * *", run: () => dispatcher.tick() },
    { name: "webhooks-purge-deliveries", pattern: "0 23 3 * * *", run: () => void purgeFinishedDeliveries(deps.db, deps.clock.now()) },
  ];
}

import type { Deps } from "../../deps";
import type { PeriodicTask } from "../../jobs/scheduler";
import { expireCommands } from "../commands/runtime";
import { reportOfflineDevices } from "./service";

/** Device runtime periodic work: command expiry (spec 3.2) and the device.offline check (spec 6). */
export function registerDeviceRuntimeWork(deps: Deps): PeriodicTask[] {
  const { db, clock } = deps;
  return [
    // Every 10 s: an expired command must not linger as pending in GET responses for long.
    { name: "expire-device-commands", pattern: "*/10 * * * * *", run: () => void expireCommands(db, clock.now()) },
    { name: "device-offline-check", pattern: "0 * * * * *", run: () => void reportOfflineDevices(deps, clock.now()) },
  ];
}

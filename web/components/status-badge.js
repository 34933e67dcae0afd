import { badge } from "../ui.js";
import { when } from "../ui.js";

/** Spec 2.5: reachability is not a server field; a device is online while its last heartbeat is under 15 minutes old. */
export const ONLINE_WINDOW_MS = 15 * 60_000;

export function isOnline(lastHeartbeatAt, now = Date.now()) {
  return Boolean(lastHeartbeatAt) && now - Date.parse(lastHeartbeatAt) < ONLINE_WINDOW_MS;
}

/** "online" or "offline" by the 15-minute rule, with the last heartbeat as its description. */
export function liveBadge(lastHeartbeatAt) {
  const el = badge(isOnline(lastHeartbeatAt) ? "online" : "offline", isOnline(lastHeartbeatAt) ? "good" : "");
  el.title = lastHeartbeatAt ? `Last heartbeat ${when(lastHeartbeatAt)}` : "No heartbeat yet";
  return el;
}

/**
 * Spec 2.5: "a device is online when now minus last_heartbeat_at is under 15 minutes". The one
 * copy of the rule, judged on the server's clock: the settings view's network_type uses it, and
 * so does the dashboard's badge, through GET /dashboard/api/reachability (decision 135).
 */
export const ONLINE_WINDOW_MS = 15 * 60 * 1000;

export function isOnline(lastHeartbeatAt: string | null, now: Date): boolean {
  return lastHeartbeatAt !== null && now.getTime() - Date.parse(lastHeartbeatAt) < ONLINE_WINDOW_MS;
}

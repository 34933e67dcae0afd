import { adminApi } from "../api.js";
import { badge, when } from "../ui.js";

/**
 * Spec 2.5's online rule is the server's, on its clock (decision 135): the badges a page draws
 * in one go ask GET /dashboard/api/reachability once, about all their heartbeats together.
 */
let batch = null;
function judge(lastHeartbeatAt) {
  if (!batch) {
    const asked = { times: [], verdicts: null };
    // After the page's synchronous drawing: every badge of a table is in the one request.
    asked.verdicts = Promise.resolve().then(() => {
      batch = null;
      return adminApi("/reachability", { query: new URLSearchParams(asked.times.map((at) => ["last_heartbeat_at", at])) });
    });
    batch = asked;
  }
  const i = batch.times.push(lastHeartbeatAt) - 1;
  return batch.verdicts.then((r) => r.online[i]);
}

/** The last verdict per heartbeat, shown while the server is asked again, so a polled page does not flicker. */
const lastVerdict = new Map();
const REMEMBERED = 1000;

function show(el, online) {
  el.textContent = online ? "online" : "offline";
  el.className = online ? "badge good" : "badge";
}

/** "online" or "offline" by the 15-minute rule as the server judges it, with the last heartbeat as its description. */
export function liveBadge(lastHeartbeatAt) {
  const el = badge("…");
  el.title = lastHeartbeatAt ? `Last heartbeat ${when(lastHeartbeatAt)}` : "No heartbeat yet";
  if (!lastHeartbeatAt) {
    show(el, false);
    return el;
  }
  if (lastVerdict.has(lastHeartbeatAt)) show(el, lastVerdict.get(lastHeartbeatAt));
  judge(lastHeartbeatAt).then(
    (online) => {
      if (lastVerdict.size >= REMEMBERED) lastVerdict.clear();
      lastVerdict.set(lastHeartbeatAt, online);
      show(el, online);
    },
    () => {}, // Signed out or offline: the shell says so; the badge keeps what it showed.
  );
  return el;
}

import { pagedTable } from "../../components/table.js";
import { badge, confirmDialog, h, statusBadge, when } from "../../ui.js";

/**
 * One endpoint and its delivery log: status, attempts, latency and the receiver's answer.
 * Retry sends a delivery again now with the same evt_ id (Replay for one that succeeded);
 * a disabled endpoint is re-enabled by a manual retry that succeeds, so Re-enable retries
 * its newest delivery.
 */
export function endpointCard(ctx, w, onChange) {
  const path = `/webhooks/${w.id}`;
  const alert = h("p", { class: "error", role: "alert" });
  const state = h("p", {});
  let newest = null;
  const deliveries = pagedTable({
    api: ctx.api,
    path: `${path}/deliveries`,
    caption: `Deliveries to ${w.url}`,
    empty: "No deliveries yet.",
    limit: 10,
    columns: [
      { title: "Event", cell: (d) => h("span", {}, d.event_type, h("br"), h("small", { class: "muted" }, d.event_id)) },
      { title: "Status", cell: (d) => statusBadge(d.status) },
      { title: "Attempts", cell: (d) => String(d.attempt_count) },
      { title: "Latency", cell: (d) => (d.last_attempt ? `${d.last_attempt.latency_ms} ms` : "—") },
      { title: "Response", cell: response },
      { title: "Last attempt", cell: (d) => when(d.last_attempt?.attempted_at) },
      { title: "Next attempt", cell: (d) => when(d.next_attempt_at) },
      { title: "", cell: (d) => retryButton(d) },
    ],
  });

  const remove = h("button", { type: "button", class: "danger" }, "Delete endpoint");
  remove.addEventListener("click", async () => {
    if (!(await confirmDialog(`Delete the endpoint ${w.url}? Deliveries to it stop.`, "Delete"))) return;
    await act(() => ctx.api(path, { method: "DELETE" }));
    await onChange();
  });
  const el = h(
    "article",
    { class: "panel endpoint", "aria-label": `Endpoint ${w.url}` },
    h("h2", { class: "url" }, w.url),
    h("p", { class: "muted" }, `Events: ${w.events.join(", ")}${w.include_device_events ? " · device events" : ""} · created ${when(w.created_at)}`),
    state,
    alert,
    h("h3", {}, "Deliveries"),
    deliveries.el,
    remove,
  );

  async function act(fn) {
    alert.textContent = "";
    try {
      await fn();
    } catch (err) {
      alert.textContent = err.message;
    }
  }

  const retry = (d) => act(() => ctx.api(`${path}/deliveries/${d.id}/retry`, { method: "POST" })).then(refresh);

  function showState(current) {
    if (current.status === "disabled") {
      const revive = h("button", { type: "button", disabled: !newest }, "Re-enable");
      revive.addEventListener("click", () => retry(newest));
      state.replaceChildren(
        statusBadge("disabled"),
        ` since ${when(current.disabled_at)}, after 3 days of failures. Re-enable retries the newest delivery; a success turns the endpoint back on. `,
        revive,
      );
    } else if (current.failing_since) {
      state.replaceChildren(badge("failing", "bad"), ` since ${when(current.failing_since)}; disabled after 3 days of failures.`);
    } else state.replaceChildren(statusBadge("enabled"));
  }

  async function refresh() {
    const [current] = await Promise.all([ctx.api(path), deliveries.reload()]);
    newest = current.status === "disabled" ? ((await ctx.api(`${path}/deliveries`, { query: { limit: 1 } })).data[0] ?? null) : null;
    showState(current);
  }

  function retryButton(d) {
    const label = d.status === "succeeded" ? "Replay" : "Retry";
    const b = h("button", { type: "button", "aria-label": `${label} ${d.event_type} ${d.event_id}` }, label);
    b.addEventListener("click", () => retry(d));
    return b;
  }

  return { el, refresh };
}

function response(d) {
  const a = d.last_attempt;
  if (!a) return "—";
  if (a.error) return h("span", { class: "error" }, a.error);
  return h(
    "span",
    {},
    a.response_status == null ? "—" : `HTTP ${a.response_status}`,
    a.response_snippet ? h("code", { class: "snippet" }, a.response_snippet) : "",
  );
}

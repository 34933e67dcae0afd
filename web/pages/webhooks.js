import "../components/stylesheet.js";
import { checkbox, field, formAlert, showError, textInput } from "../components/fields.js";
import { copyButton, h } from "../ui.js";
import { endpointCard } from "./webhooks/endpoint.js";
import { EVENTS } from "./webhooks/events.js";

const DELIVERIES_MS = 5_000;

/** Webhook endpoints: create one (its secret shown once), and each endpoint's live delivery log. */
export async function render(view, ctx) {
  const list = h("div", { class: "endpoints" });
  const once = h("div", { class: "once", hidden: true, role: "status" });
  if (ctx.signal.aborted) return; // left while loading: the next page owns the view
  view.replaceChildren(
    h("h1", {}, "Webhooks"),
    once,
    createForm(ctx, once, () => load()),
    list,
  );

  let cards = [];
  async function load() {
    const page = await ctx.api("/webhooks", { query: { limit: 100 } });
    cards = page.data.map((w) => endpointCard(ctx, w, () => load()));
    list.replaceChildren(...(cards.length ? cards.map((c) => c.el) : [h("p", { class: "muted" }, "No webhook endpoints yet.")]));
    await Promise.all(cards.map((c) => c.refresh()));
  }
  await load();
  ctx.poll(() => Promise.all(cards.map((c) => c.refresh())), DELIVERIES_MS);
}

function createForm(ctx, once, onCreated) {
  const all = checkbox("all", true);
  const boxes = EVENTS.map((e) => field(e, checkbox("event", false)));
  boxes.forEach((b, i) => (b.querySelector("input").value = EVENTS[i]));
  const events = h("fieldset", { class: "events" }, h("legend", {}, "Events"), field("All events", all), ...boxes);
  const form = h(
    "form",
    { class: "stack", novalidate: "" },
    field("Endpoint URL", textInput("url", "", { type: "url", placeholder: "https://…", autocomplete: "off" }), { param: "url", hint: "HTTPS only" }),
    events,
    field("Include device events", checkbox("include_device_events", false), { param: "include_device_events", hint: "Enterprise plan" }),
    h("button", { type: "submit" }, "Create endpoint"),
    formAlert(),
  );
  const sync = () => boxes.forEach((b) => (b.querySelector("input").disabled = all.checked));
  all.addEventListener("change", sync);
  sync();
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const picked = all.checked ? ["*"] : [...form.querySelectorAll("input[name=event]:checked")].map((b) => b.value);
    const body = {
      url: form.elements.url.value.trim(),
      events: picked,
      ...(form.elements.include_device_events.checked ? { include_device_events: true } : {}),
    };
    try {
      const created = await ctx.api("/webhooks", { method: "POST", body });
      showSecret(once, created);
      form.reset();
      sync();
      await onCreated();
    } catch (err) {
      showError(form, err);
    }
  });
  return h("details", { class: "panel" }, h("summary", {}, "Add an endpoint"), form);
}

/** The signing secret comes back once, on creation: shown here with a copy button, never again. */
function showSecret(once, created) {
  const value = h("input", { type: "text", readonly: "", value: created.secret, class: "secret" });
  once.replaceChildren(
    h("p", {}, h("strong", {}, "Signing secret for ", created.url, ", shown only this once.")),
    field("Signing secret", value),
    copyButton(created.secret, "Copy secret"),
  );
  once.hidden = false;
}

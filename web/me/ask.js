import { clockTime } from "/dashboard/components/format.js";
import { h } from "/dashboard/ui.js";
import { api, momentLink } from "./api.js";

/**
 * Ask about the wearer's own library: one conversation per visit. Each citation in an answer
 * is a link that opens the recording at the cited moment and plays from there.
 */
export async function render(view) {
  const thread = h("div", { class: "thread", "aria-live": "polite" });
  const input = h("textarea", { id: "ask-q", name: "content", rows: 3, required: true, maxlength: 10000 });
  const send = h("button", { type: "submit" }, "Ask");
  const error = h("p", { class: "error", role: "alert" });
  const form = h("form", { class: "ask-form" }, h("label", { for: "ask-q" }, "Ask about my conversations"), input, send, error);
  let sessionId = null;
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const content = input.value.trim();
    if (!content) return;
    error.textContent = "";
    send.disabled = true;
    thread.append(message("You", [{ type: "text", text: content }]));
    try {
      const result = sessionId
        ? await api(`/ask/sessions/${encodeURIComponent(sessionId)}/messages`, { method: "POST", body: { content } })
        : await api("/ask/sessions", { method: "POST", body: { scope: { type: "library" }, initial_message: { content } } });
      sessionId = result.session_id;
      thread.append(message("Parley", result.message.parts?.length ? result.message.parts : [{ type: "text", text: result.message.content }]));
      input.value = "";
    } catch (err) {
      error.textContent = err.message;
    } finally {
      send.disabled = false;
    }
  });
  view.replaceChildren(h("h1", {}, "Ask"), thread, form);
}

function message(who, parts) {
  return h(
    "article",
    { class: who === "You" ? "message mine" : "message" },
    h("p", { class: "muted" }, who),
    h(
      "p",
      {},
      ...parts.map((p) =>
        p.type === "citation" ? h("a", { href: momentLink(p.recording_id, p.start_ms), class: "citation" }, `▶ ${clockTime(p.start_ms / 1000)}`) : p.text,
      ),
    ),
  );
}

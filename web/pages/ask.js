import "../components/stylesheet.js";
import { endUserSelect } from "../components/end-user-select.js";
import { field, formAlert, select, showError, textInput } from "../components/fields.js";
import { h, when } from "../ui.js";
import { messageView } from "./ask/message.js";
import { recordingPicker } from "./ask/recording-picker.js";

const SCOPES = [
  ["library", "An end user's library"],
  ["recording", "One recording"],
  ["selected", "Selected recordings"],
];
/** The new chat whose first question was saved but not answered, until its page shows why. */
let unanswered = null;

const PROVIDERS = [
  ["", "Server default"],
  ["llama_cpp", "Local model (llama.cpp)"],
  ["openai_compatible", "OpenAI-compatible server"],
  ["extractive", "Extractive (quotes, no model)"],
];

/**
 * Ask: a chat over one recording, an end user's library or selected recordings. A new
 * chat creates the session with its first question; the session then lives in the URL
 * (#/ask?session=as_…), so its history reloads from the API. Citations open the recording
 * at the cited millisecond, playing.
 */
export async function render(view, ctx) {
  const sessionId = ctx.query.get("session");
  // A new chat whose first answer failed opens its session with the reason (the question is in it).
  const failure = unanswered?.sessionId === sessionId ? unanswered.notice : null;
  unanswered = null;
  const session = sessionId ? await ctx.api(`/ask/sessions/${encodeURIComponent(sessionId)}`) : null;
  const owner = session?.end_user_id ? await ctx.api(`/end-users/${session.end_user_id}`).catch(() => null) : null;
  const log = h("div", { role: "log", "aria-label": "Conversation", class: "chat" });
  const form = session ? followUpForm(ctx, session, log) : await newChatForm(ctx);
  const recent = await recentSessions(ctx, sessionId);
  // The history is in the log before the form is shown: a follow-up asked meanwhile would be wiped by it.
  if (session) {
    const history = await ctx.api(`/ask/sessions/${session.id}/messages`, { query: { limit: 100 } });
    log.replaceChildren(...history.data.reverse().map((m) => messageView(m)));
  }
  if (ctx.signal.aborted) return; // left while loading: the next page owns the view
  view.replaceChildren(
    h("h1", {}, "Ask"),
    h(
      "div",
      { class: "ask-layout" },
      h("div", { class: "ask-main" }, session ? h("p", { class: "muted" }, scopeText(session, owner)) : null, log, failure, form),
      recent,
    ),
  );
}

function scopeText(s, owner) {
  if (s.scope.type === "recording") return `About ${s.scope.recording_title ?? s.scope.recording_ids[0]}`;
  if (s.scope.type === "selected") return `About ${s.scope.recording_ids.length} selected recording${s.scope.recording_ids.length === 1 ? "" : "s"}`;
  return `About the library of ${owner?.name ?? owner?.external_id ?? s.end_user_id}`;
}

const questionField = () => field("Question", h("textarea", { name: "content", rows: "3", required: "" }), { param: "content" });
const providerField = (value) => field("Provider", select("provider", PROVIDERS, value), { param: "provider" });

async function newChatForm(ctx) {
  const recordingId = ctx.query.get("recording_id") ?? "";
  const scope = select("scope", SCOPES, recordingId ? "recording" : "library");
  const picker = recordingPicker(ctx);
  const form = h(
    "form",
    { class: "stack ask-form", novalidate: "" },
    field("Scope", scope, { param: "scope.type" }),
    field("End user", await endUserSelect(ctx.api, ctx.query.get("end_user_id") ?? ""), { param: "end_user_id" }),
    field("Recording id", textInput("recording_id", recordingId, { placeholder: "rec_…" }), { param: "scope.recording_id" }),
    picker.el,
    providerField(""),
    questionField(),
    h("button", { type: "submit" }, "Ask"),
    h("p", { role: "status", class: "muted" }),
    formAlert(),
  );
  const show = () => {
    const t = scope.value;
    form.elements.recording_id.closest(".field").hidden = t !== "recording";
    picker.el.hidden = t !== "selected";
    form.elements.end_user_id.closest(".field").hidden = t === "recording";
    if (t === "selected") picker.show(form.elements.end_user_id.value).catch((err) => showError(form, err));
  };
  scope.addEventListener("change", show);
  form.elements.end_user_id.addEventListener("change", show);
  show();
  onSubmit(form, async (el) => {
    const type = el.scope.value;
    const ids = picker.ids();
    const body = {
      scope: type === "recording" ? { type, recording_id: el.recording_id.value.trim() } : type === "selected" ? { type, recording_ids: ids } : { type },
      initial_message: message(el),
      ...(type !== "recording" && el.end_user_id.value ? { end_user_id: el.end_user_id.value } : {}),
    };
    try {
      const result = await ctx.api("/ask/sessions", { method: "POST", body });
      ctx.navigate(`#/ask?session=${result.session_id}`);
    } catch (err) {
      const saved = savedIn(err);
      if (!saved) throw err;
      unanswered = { sessionId: saved, notice: unansweredNotice(err, saved) };
      ctx.navigate(`#/ask?session=${saved}`);
    }
  });
  return form;
}

/** The session a failed Ask kept the question in: its Location header (/v1/ask/sessions/as_…), or null. */
function savedIn(err) {
  return err?.location?.match(/\/ask\/sessions\/([^/?#]+)$/)?.[1] ?? null;
}

/** What to do next, in the dashboard: the API's message ends with how an API client retries, which is not for this page. */
const NEXT_STEP = {
  transcription_not_ready: ["Wait until the recording's transcript is complete, then ask again below."],
  transcript_too_large: [
    "Ask about the end user's library or selected recordings instead (those read only the passages that match), or choose a model with a larger context.",
  ],
};

/** Why a question got no answer, and that it is saved in this chat. */
function unansweredNotice(err, sessionId) {
  const retry = err.message.indexOf(` The question is saved in session ${sessionId}`);
  const reason = retry >= 0 ? err.message.slice(0, retry) : err.message;
  const next = NEXT_STEP[err.code] ?? [
    "Ask it again below, with the provider “Extractive (quotes, no model)” for an answer made of quotes, or once the model works again (",
    h("a", { href: "#/system" }, "System"),
    " says what is missing).",
  ];
  return h(
    "div",
    { class: "warning unanswered", role: "alert" },
    h("p", {}, h("strong", {}, "No answer. "), reason),
    h("p", {}, "Your question is saved in this chat. ", ...next),
  );
}

function followUpForm(ctx, session, log) {
  const form = h(
    "form",
    { class: "stack ask-form", novalidate: "" },
    providerField(session.last_provider ?? ""),
    questionField(),
    h("button", { type: "submit" }, "Ask"),
    h("p", { role: "status", class: "muted" }),
    formAlert(),
  );
  onSubmit(form, async (el) => {
    const body = message(el);
    form.parentElement.querySelector(".unanswered")?.remove();
    log.append(messageView({ role: "user", content: body.content, parts: [{ type: "text", text: body.content }], created_at: new Date().toISOString() }));
    try {
      const result = await ctx.api(`/ask/sessions/${session.id}/messages`, { method: "POST", body });
      log.append(messageView(result.message, result.sources));
    } catch (err) {
      if (savedIn(err) !== session.id) throw err;
      form.before(unansweredNotice(err, session.id));
    }
    el.content.value = "";
  });
  return form;
}

function message(el) {
  return { content: el.content.value.trim(), ...(el.provider.value ? { provider: el.provider.value } : {}) };
}

/** Submits once at a time, saying it is thinking; errors go beside their field. */
function onSubmit(form, send) {
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const button = form.querySelector("button[type=submit]");
    const status = form.querySelector("[role=status]");
    button.disabled = true;
    status.textContent = "Thinking…";
    try {
      await send(form.elements);
      form.querySelector(".form-error").textContent = "";
    } catch (err) {
      showError(form, err);
    } finally {
      button.disabled = false;
      status.textContent = "";
    }
  });
}

async function recentSessions(ctx, current) {
  const page = await ctx.api("/ask/sessions", { query: { limit: 10 } });
  return h(
    "aside",
    { class: "ask-sessions", "aria-label": "Recent chats" },
    h("h2", {}, "Recent chats"),
    h("p", {}, h("a", { href: "#/ask" }, "New chat")),
    page.data.length
      ? h(
          "ul",
          {},
          ...page.data.map((s) =>
            h(
              "li",
              {},
              h("a", { href: `#/ask?session=${s.id}`, "aria-current": s.id === current ? "page" : null }, s.title),
              h("span", { class: "muted" }, ` ${when(s.last_message_at ?? s.created_at)}`),
            ),
          ),
        )
      : h("p", { class: "muted" }, "No chats yet."),
  );
}

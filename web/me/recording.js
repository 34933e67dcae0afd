import { duration } from "/dashboard/components/format.js";
import { markdown } from "/dashboard/components/markdown.js";
import { transcriptPlayer } from "/dashboard/components/transcript-player.js";
import { transcriptEditor } from "/dashboard/pages/recording/corrections.js";
import { confirmDialog, h, statusBadge, when } from "/dashboard/ui.js";
import { api, apiUrl } from "./api.js";

const TEMPLATE_NAMES = { general: "General", sales: "Sales", clinical: "Clinical", legal: "Legal" };

/**
 * One of the wearer's recordings: the audio above its transcript (a line plays from there),
 * the speakers to name, summaries by template, downloads, and Delete where allowed.
 * ?t=<ms>&play=1 opens it at a moment (a search hit, an Ask citation).
 */
export async function render(view, ctx) {
  const path = `/recordings/${encodeURIComponent(ctx.id)}`;
  const rec = await api(path);
  const txn = (await api("/transcriptions", { query: { recording_id: rec.id, limit: 1 } })).data[0] ?? null;
  const summaries = txn?.status === "completed" ? (await api("/summaries", { query: { transcription_id: txn.id, limit: 20 } })).data : [];
  if (ctx.signal.aborted) return;
  const alert = h("p", { class: "error", role: "alert" });
  const hasAudio = !["pending", "streaming"].includes(rec.status);
  const t = Number(ctx.query.get("t"));
  const startMs = ctx.query.has("t") && Number.isFinite(t) ? t : null;
  const transcript = txn?.status === "completed" && hasAudio ? editableTranscript(ctx, txn, path, { startMs, autoplay: ctx.query.get("play") === "1" }) : null;
  // replaceChildren would write a null as the text "null": absent parts are left out first.
  const parts = [
    h("p", { class: "back" }, h("a", { href: "#/" }, "← My recordings")),
    h("h1", {}, rec.name ?? when(rec.recorded_at ?? rec.created_at), " ", statusBadge(rec.status)),
    h("p", { class: "muted" }, when(rec.recorded_at ?? rec.created_at), " · ", duration(rec.duration_seconds)),
    transcript ? transcript.media : null,
    h(
      "section",
      { "aria-labelledby": "txn-h" },
      h("h2", { id: "txn-h" }, "Transcript"),
      ...(transcript ? transcript.parts : [h("p", { class: "muted" }, transcriptNote(rec, txn))]),
    ),
    txn?.status === "completed" ? speakersSection(ctx, txn) : null,
    summariesSection(summaries),
    h("section", { "aria-labelledby": "files-h" }, h("h2", { id: "files-h" }, "Download"), downloads(rec, txn, path)),
    ctx.session.may_delete ? deleteSection(ctx, rec, path, alert) : null,
    alert,
  ];
  view.replaceChildren(...parts.filter(Boolean));
}

/**
 * The audio and its transcript (a line plays from there), and the transcript corrected in
 * place with undo by the dashboard's own editor (issue 25): each change a new revision, the
 * machine's original kept. Done editing opens the recording anew, so the speakers' names
 * and the player show the latest revision.
 */
function editableTranscript(ctx, txn, path, { startMs, autoplay }) {
  const player = transcriptPlayer({ src: apiUrl(`${path}/audio`), segments: txn.segments, startMs, autoplay });
  const body = h("div", {}, player.transcript);
  const note = h("p", { class: "muted", role: "status" });
  let current = txn;
  const edit = h("button", { type: "button", "aria-pressed": "false" }, "Edit transcript");
  edit.addEventListener("click", () => {
    // The revision in the address makes it a new one, so the page renders again.
    if (current !== txn) return ctx.navigate(`#/r/${encodeURIComponent(txn.recording_id)}?revision=${current.revision}`);
    const editing = edit.getAttribute("aria-pressed") !== "true";
    edit.setAttribute("aria-pressed", String(editing));
    edit.textContent = editing ? "Done editing" : "Edit transcript";
    body.replaceChildren(editing ? transcriptEditor({ api }, current, corrected) : player.transcript);
  });
  /** A correction saved: the editor on the new revision, the field that had the focus keeping it. */
  function corrected(next, message) {
    const focused = document.activeElement?.getAttribute("aria-label");
    current = next;
    note.textContent = message;
    body.replaceChildren(transcriptEditor({ api }, next, corrected));
    if (focused) body.querySelector(`[aria-label="${CSS.escape(focused)}"]`)?.focus();
  }
  return { media: h("div", { class: "media" }, player.audio), parts: [h("p", { class: "row" }, edit), note, body] };
}

function transcriptNote(rec, txn) {
  if (!txn) return rec.status === "pending" || rec.status === "streaming" ? "The recording is still arriving." : "No transcript yet.";
  if (txn.status === "failed") return `The transcription failed: ${txn.error?.message ?? "unknown error"}`;
  return "Transcribing… open it again in a moment.";
}

/** Each speaker with a field to name them, as the dashboard names them (PATCH /transcriptions/{id}/speakers). */
function speakersSection(ctx, txn) {
  const forms = txn.speakers.map((s) => {
    const id = `speaker-${s.id}`;
    const input = h("input", { id, name: "name", value: s.label, required: true, maxlength: 100 });
    const error = h("p", { class: "error", role: "alert" });
    const form = h("form", { class: "row" }, h("label", { for: id }, `Name for ${s.id}`), input, h("button", { type: "submit" }, "Rename"), error);
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      error.textContent = "";
      try {
        await api(`/transcriptions/${encodeURIComponent(txn.id)}/speakers`, { method: "PATCH", body: { [s.id]: { name: input.value.trim() } } });
        ctx.navigate(`#/r/${encodeURIComponent(txn.recording_id)}?renamed=${Date.now()}`);
      } catch (err) {
        error.textContent = err.message;
      }
    });
    return h("li", {}, form);
  });
  return h(
    "section",
    { "aria-labelledby": "speakers-h" },
    h("h2", { id: "speakers-h" }, "Speakers"),
    forms.length ? h("ul", { class: "plain" }, ...forms) : h("p", { class: "muted" }, "No speakers were told apart."),
  );
}

function summariesSection(summaries) {
  const done = summaries.filter((s) => s.status === "completed");
  return h(
    "section",
    { "aria-labelledby": "sum-h" },
    h("h2", { id: "sum-h" }, "Summaries"),
    done.length
      ? done.map((s) =>
          h(
            "article",
            { class: "card", "aria-label": `${TEMPLATE_NAMES[s.template] ?? s.template} summary` },
            h("h3", {}, TEMPLATE_NAMES[s.template] ?? s.template),
            markdown(s.text, { headingOffset: 3 }),
          ),
        )
      : h("p", { class: "muted" }, "No summary yet."),
  );
}

function downloads(rec, txn, path) {
  const name = (rec.name ?? rec.id).replace(/[^\w.-]+/g, "-");
  const links = [];
  if (!["pending", "streaming"].includes(rec.status)) links.push(h("a", { href: apiUrl(`${path}/audio`), download: name, class: "button" }, "Audio"));
  if (txn?.status === "completed")
    links.push(
      h(
        "a",
        { href: apiUrl(`/transcriptions/${encodeURIComponent(txn.id)}/transcript`, { format: "txt" }), download: `${name}.txt`, class: "button" },
        "Transcript",
      ),
    );
  return links.length ? h("p", { class: "row" }, ...links) : h("p", { class: "muted" }, "Nothing to download yet.");
}

function deleteSection(ctx, rec, path, alert) {
  const button = h("button", { type: "button", class: "danger" }, "Delete this recording");
  button.addEventListener("click", async () => {
    alert.textContent = "";
    if (!(await confirmDialog("Delete this recording? Its audio, transcript and summaries are removed for good.", "Delete"))) return;
    try {
      await api(path, { method: "DELETE" });
      ctx.navigate("#/");
    } catch (err) {
      alert.textContent = err.message;
    }
  });
  return h("section", { "aria-labelledby": "del-h" }, h("h2", { id: "del-h" }, "Delete"), button);
}

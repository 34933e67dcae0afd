import "../components/stylesheet.js";
import { apiExchange, apiUrl } from "../api.js";
import { facts } from "../components/facts.js";
import { formAlert } from "../components/fields.js";
import { duration } from "../components/format.js";
import { nameBook } from "../components/names.js";
import { liveTranscript } from "../components/live-transcript.js";
import { transcriptPlayer } from "../components/transcript-player.js";
import { confirmDialog, h, statusBadge, when } from "../ui.js";
import { transcriptEditor } from "./recording/corrections.js";
import { summariesPanel } from "./recording/summaries.js";

const WATCH_MS = 2_000;

/** What the transcript can be downloaded as: the legal transcript first. */
const EXPORT_FORMATS = [
  ["pdf", "PDF"],
  ["docx", "Word"],
  ["txt", "Text"],
  ["srt", "SRT"],
  ["vtt", "WebVTT"],
  ["json", "JSON"],
];

/** What the redacted view's Parley-Redaction header says, for the reader (decision 111). */
const REDACTION_PASSES = {
  "rules; model=completed": "Identifiers found by the rules and by the language model.",
  "rules; model=failed": "Identifiers found by the rules only: the language model's check of this transcript failed.",
  "rules; model=not_run": "Identifiers found by the rules only: the language model has not checked this transcript (none installed, or still running).",
};

/**
 * One recording: the transcript under its player, the actions (download, reprocess, ask,
 * delete) and details beside it, summaries per template below. ?t=<ms>&play=1 opens it at an offset, playing.
 */
export async function render(view, ctx) {
  const path = `/recordings/${encodeURIComponent(ctx.id)}`;
  const rec = await ctx.api(path);
  const names = nameBook(ctx.api);
  await names.load([rec]);
  const t = ctx.query.get("t");
  const heading = h("h1", {}, rec.name ?? rec.id, " ", statusBadge(rec.status));
  const transcript = h(
    "section",
    { class: "transcript", "aria-labelledby": "txn-h" },
    h("h2", { id: "txn-h" }, "Transcript"),
    h("p", { class: "muted" }, "Loading…"),
  );
  // Before its upload completes a recording has no audio to play.
  const hasAudio = !["pending", "streaming"].includes(rec.status);
  const media = h(
    "div",
    { class: "media" },
    hasAudio ? transcriptPlayer({ src: apiUrl(`${path}/audio`), segments: [] }).audio : h("p", { class: "muted" }, "No audio uploaded yet."),
  );
  const alert = formAlert();
  const summaries = summariesPanel(ctx);
  if (ctx.signal.aborted) return; // left while loading: the next page owns the view
  // The transcript is what a recording is for: it comes first, with the player above it;
  // the actions and details sit beside it on a wide screen and after it on a phone.
  view.replaceChildren(
    h("p", { class: "back" }, h("a", { href: "#/recordings" }, "← Recordings")),
    heading,
    h("p", { class: "muted subtitle" }, ...byline(rec, names)),
    h(
      "div",
      { class: "recording-layout" },
      h("div", { class: "recording-main" }, media, transcript),
      h(
        "aside",
        { class: "recording-side", "aria-labelledby": "details-h" },
        actions(ctx, rec, path, alert, watch),
        alert,
        h("h2", { id: "details-h" }, "Details"),
        facts([
          ["Recorded", when(rec.recorded_at ?? rec.created_at)],
          ["Duration", duration(rec.duration_seconds)],
          ["Size", rec.file_size_bytes == null ? "—" : `${Math.round(rec.file_size_bytes / 1024)} KB`],
          ["Format", rec.mime_type ?? rec.format],
          ["Source", rec.source],
          ["Id", rec.id],
        ]),
      ),
    ),
    summaries.el,
  );

  // The transcript and player are rebuilt only when the latest transcription changes, so
  // polling never interrupts playback. Polling stops once nothing is processing; an action
  // that starts work (reprocess, a summary) starts it again.
  let shown = null;
  let stop = null;
  const latestTranscription = async () => (await ctx.api("/transcriptions", { query: { recording_id: rec.id, limit: 1 } })).data[0] ?? null;
  async function check() {
    const latest = await latestTranscription().catch((err) => {
      if (err?.status !== 403) throw err;
      // A role without content (decision 136): the server's refusal says how to get it, break-glass.
      const breakGlass = rec.end_user_id
        ? h("a", { href: `#/compliance?end_user_id=${encodeURIComponent(rec.end_user_id)}` }, "Open break-glass for this end user")
        : null;
      transcript.replaceChildren(h("h2", { id: "txn-h" }, "Transcript"), h("p", { class: "error", role: "alert" }, err.message), breakGlass);
      return undefined;
    });
    if (latest === undefined) {
      stop?.();
      stop = null;
      return;
    }
    const key = latest ? `${latest.id}:${latest.status}` : "none";
    if (key !== shown) {
      shown = key;
      showTranscription(latest);
      // The recording's own status follows its processing (uploaded -> processing -> completed).
      if (latest) heading.lastChild.replaceWith(statusBadge((await ctx.api(path)).status));
    }
    const summariesBusy = await summaries.show(latest);
    if (latest?.status !== "processing" && !summariesBusy) {
      stop?.();
      stop = null;
    }
  }
  function watch() {
    stop ??= ctx.poll(check, WATCH_MS);
  }
  summaries.onStarted = watch;
  watch();

  // Names, dates of birth, numbers and addresses replaced by their kind (decision 106).
  let hideIdentifiers = false;
  // Corrections (issue 25): the transcript edited in place, or its machine-made original shown.
  let editing = false;
  let showOriginal = false;
  let live = null;
  function showTranscription(txn, note = "") {
    const title = h("h2", { id: "txn-h" }, "Transcript ", txn ? statusBadge(txn.status) : "");
    live?.abort();
    // A streamed recording's transcript grows while it streams (issue 30).
    if (txn?.status === "processing" && rec.is_streaming) {
      live = new AbortController();
      ctx.signal.addEventListener("abort", () => live?.abort(), { once: true });
      transcript.replaceChildren(title, liveTranscript(txn.id, { signal: live.signal, onEnd: check }));
      return;
    }
    if (!txn || txn.status !== "completed") {
      const note = !txn
        ? "No transcript yet."
        : txn.status === "processing"
          ? "Transcribing… this page updates when it is done."
          : `Transcription failed: ${txn.error?.message ?? "unknown error"}`;
      transcript.replaceChildren(title, h("p", { class: txn?.status === "failed" ? "error" : "muted", role: "status" }, note));
      return;
    }
    const startMs = t !== null && Number.isFinite(Number(t)) ? Number(t) : null;
    const hide = h("input", { type: "checkbox", id: "hide-identifiers", checked: hideIdentifiers });
    const original = h("input", { type: "checkbox", id: "show-original", checked: showOriginal });
    const edit = h("button", { type: "button", "aria-pressed": String(editing) }, editing ? "Done editing" : "Edit transcript");
    const views = editing
      ? []
      : [
          h("div", { class: "field check" }, hide, h("label", { for: "hide-identifiers" }, "Hide identifiers")),
          txn.revision > 0
            ? h("div", { class: "field check" }, original, h("label", { for: "show-original" }, "Show the original (before corrections)"))
            : null,
        ];
    // The latest revision as a file (decision 155): the session goes with the link, as with the audio.
    const exportsOf = h(
      "p",
      { class: "transcript-exports" },
      "Export: ",
      ...EXPORT_FORMATS.flatMap(([format, label], i) => [
        i ? " · " : "",
        h("a", { href: apiUrl(`/transcriptions/${encodeURIComponent(txn.id)}/export`, { format }), download: "" }, label),
      ]),
    );
    const body = h("div", {});
    const passes = h("p", { class: "muted hint", role: "status" });
    const revisionNote = txn.revision > 0 ? ` · corrected (revision ${txn.revision})` : "";
    transcript.replaceChildren(
      title,
      h(
        "p",
        { class: "muted" },
        `${txn.language ?? ""} · ${txn.speakers.length} speaker${txn.speakers.length === 1 ? "" : "s"} · ${txn.model ?? ""}${revisionNote}`,
      ),
      h("div", { class: "transcript-tools" }, ...views, edit),
      exportsOf,
      h("p", { class: "muted", role: "status" }, note),
      passes,
      body,
    );
    // Each view is read from the API, which audits it: the original as a read, the redacted one as a redacted read.
    async function show(at, autoplay) {
      let shown = txn;
      passes.replaceChildren();
      if (hideIdentifiers || showOriginal) {
        const query = { redacted: hideIdentifiers ? "true" : undefined, revision: showOriginal && txn.revision > 0 ? 0 : undefined };
        const read = await apiExchange(`/transcriptions/${encodeURIComponent(txn.id)}`, { query });
        shown = read.data;
        if (hideIdentifiers) passes.replaceChildren(REDACTION_PASSES[read.headers.get("parley-redaction")] ?? "");
      }
      const next = transcriptPlayer({ src: apiUrl(`${path}/audio`), segments: shown.segments, startMs: at, autoplay });
      media.replaceChildren(next.audio);
      body.replaceChildren(next.transcript);
    }
    const playhead = () => {
      const playing = media.querySelector("audio");
      return playing ? Math.round(playing.currentTime * 1000) : startMs;
    };
    hide.addEventListener("change", () => {
      hideIdentifiers = hide.checked;
      show(playhead(), false);
    });
    original.addEventListener("change", () => {
      showOriginal = original.checked;
      show(playhead(), false);
    });
    edit.addEventListener("click", () => {
      editing = !editing;
      showTranscription(txn);
    });
    // The editor works on the latest revision as it is, never on a redacted or earlier view; the player stays as it was.
    if (editing) body.replaceChildren(transcriptEditor(ctx, txn, corrected));
    else show(startMs, ctx.query.get("play") === "1");
  }

  /** A correction saved: the transcript again, with the field that had the focus keeping it. */
  function corrected(next, note) {
    const focused = document.activeElement?.getAttribute("aria-label");
    showTranscription(next, note);
    if (focused) transcript.querySelector(`[aria-label="${CSS.escape(focused)}"]`)?.focus();
  }
}

/** Whose recording it is, from which device, when and how long: "Simulated wearer 2 · Ward pin 2 · 27/11/2026, 09:01 · 0:12". */
function byline(rec, names) {
  const parts = [
    rec.end_user_id ? names.link("end_user_id", rec.end_user_id) : "No end user",
    rec.device_id ? names.link("device_id", rec.device_id) : null,
    when(rec.recorded_at ?? rec.created_at),
    rec.duration_seconds == null ? null : duration(rec.duration_seconds),
  ];
  return parts.filter(Boolean).flatMap((p, i) => (i ? [" · ", p] : [p]));
}

function actions(ctx, rec, path, alert, onReprocess) {
  const reprocess = h("button", { type: "button" }, "Reprocess");
  reprocess.addEventListener("click", async () => {
    alert.textContent = "";
    try {
      await ctx.api("/transcriptions", { method: "POST", body: { recording_id: rec.id } });
      onReprocess();
    } catch (err) {
      alert.textContent = err.message;
    }
  });
  const remove = h("button", { type: "button", class: "danger" }, "Delete");
  remove.addEventListener("click", async () => {
    if (!(await confirmDialog(`Delete ${rec.name ?? rec.id}? Its audio, transcriptions and summaries are removed for good.`, "Delete"))) return;
    try {
      await ctx.api(path, { method: "DELETE" });
      ctx.navigate("#/recordings");
    } catch (err) {
      alert.textContent = err.message;
    }
  });
  const download = h("a", { href: apiUrl(`${path}/audio`), download: rec.name ?? rec.id, class: "button" }, "Download");
  const ask = h("a", { href: `#/ask?recording_id=${encodeURIComponent(rec.id)}`, class: "button" }, "Ask about it");
  return h("div", { class: "actions" }, download, reprocess, ask, remove);
}

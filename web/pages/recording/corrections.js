import { formAlert } from "../../components/fields.js";
import { clockTime } from "../../components/format.js";
import { h } from "../../ui.js";

/**
 * The revision an undo goes back from: a restore stands for the revision it restored, so
 * undoing twice steps back twice rather than flipping between two states.
 */
function undoneFrom(revisions) {
  const byNumber = new Map(revisions.map((r) => [r.revision, r]));
  let r = revisions[0];
  while (r && r.restored_from !== null) r = byNumber.get(r.restored_from);
  return r?.revision ?? 0;
}

/**
 * A completed transcript edited in place (issue 25): each segment's speaker and words are
 * fields, saved when left as a new revision of the transcript (PATCH
 * /transcriptions/{id}/segments/{index}); the machine's original is never changed. Undo
 * restores the revision before the latest as one more (POST /transcriptions/{id}/revisions),
 * so nothing is lost either. onChange(txn, note) gets the corrected transcription.
 */
export function transcriptEditor(ctx, txn, onChange) {
  const path = `/transcriptions/${encodeURIComponent(txn.id)}`;
  const alert = formAlert();
  const wholeVoice = h("input", { type: "checkbox", id: "rename-voice" });
  // Off for the machine's original; otherwise on until the history says every correction is undone.
  const undo = h("button", { type: "button", disabled: txn.revision === 0 }, "Undo");
  const names = h("datalist", { id: "speaker-names" }, ...txn.speakers.map((s) => h("option", { value: s.label })));

  async function send(request, note) {
    alert.replaceChildren();
    try {
      const next = await ctx.api(request.path, { method: request.method, body: request.body });
      onChange(next, note(next));
    } catch (err) {
      alert.replaceChildren(err.message);
    }
  }

  function row(segment, index) {
    const n = index + 1;
    const speaker = h("input", { type: "text", value: segment.speaker, list: "speaker-names", "aria-label": `Speaker of segment ${n}`, maxlength: "100" });
    const words = h("textarea", { rows: "2", "aria-label": `Words of segment ${n}`, maxlength: "10000" }, segment.text);
    speaker.addEventListener("change", () =>
      send(
        { path: `${path}/segments/${index}`, method: "PATCH", body: { speaker: speaker.value, apply_to: wholeVoice.checked ? "speaker" : "segment" } },
        (next) => `Saved as revision ${next.revision}.`,
      ),
    );
    words.addEventListener("change", () =>
      send({ path: `${path}/segments/${index}`, method: "PATCH", body: { text: words.value } }, (next) => `Saved as revision ${next.revision}.`),
    );
    return h("li", { class: "segment-edit" }, h("span", { class: "segment-time" }, clockTime(segment.start)), speaker, words);
  }

  undo.addEventListener("click", async () => {
    const revisions = (await ctx.api(`${path}/revisions`)).data;
    const restore = undoneFrom(revisions) - 1;
    if (restore < 0) return;
    await send({ path: `${path}/revisions`, method: "POST", body: { restore } }, (next) => `Undone: revision ${next.revision} restores revision ${restore}.`);
  });
  // Whether there is anything to undo is in the history, read once the editor opens.
  ctx
    .api(`${path}/revisions`)
    .then((page) => {
      undo.disabled = undoneFrom(page.data) === 0;
    })
    .catch(() => {});

  return h(
    "div",
    { class: "transcript-editor" },
    h(
      "div",
      { class: "editor-tools" },
      undo,
      h("div", { class: "field check" }, wholeVoice, h("label", { for: "rename-voice" }, "A new speaker name renames that voice everywhere")),
    ),
    alert,
    names,
    h("ol", { class: "segments editing", "aria-label": "Transcript segments, editable" }, ...txn.segments.map(row)),
  );
}

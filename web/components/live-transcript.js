import { apiUrl } from "../api.js";
import { h } from "../ui.js";
import { clockTime } from "./format.js";

/**
 * A streaming recording's transcript as it grows (GET /transcriptions/{id}/live, decision
 * 163): each provisional segment is appended as the server commits it, with its provisional
 * speaker (decision 175). EventSource sends the session cookie and, on a reconnect,
 * Last-Event-ID, so nothing is shown twice. The
 * stream ends with `completed` or `failed`; `onEnd` then lets the page show the final
 * transcript. Closed when `signal` aborts (the page left, or the view rebuilt).
 */
export function liveTranscript(transcriptionId, { signal, onEnd }) {
  const list = h("ol", { class: "live-segments", "aria-label": "Live transcript" });
  const note = h("p", { class: "muted", role: "status" }, "Transcribing while the recording streams; provisional until it completes.");
  const source = new EventSource(apiUrl(`/transcriptions/${encodeURIComponent(transcriptionId)}/live`));
  source.addEventListener("segment", (e) => {
    const s = JSON.parse(e.data);
    // None yet when the region was too short to tell a voice by.
    const speaker = s.speaker ? [h("span", { class: "segment-speaker" }, s.speaker), " "] : [];
    list.append(h("li", {}, h("span", { class: "muted" }, clockTime(s.start)), " ", ...speaker, s.text));
  });
  const end = () => {
    source.close();
    onEnd?.();
  };
  source.addEventListener("completed", end);
  source.addEventListener("failed", end);
  signal.addEventListener("abort", () => source.close(), { once: true });
  return h("div", { class: "live-transcript" }, note, list);
}

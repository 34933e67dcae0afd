import { clockTime, recordingAt } from "../../components/format.js";
import { h, when } from "../../ui.js";

/** A citation: a link that opens the recording at the cited millisecond and plays from there. */
export function citationLink(recordingId, startMs) {
  const at = clockTime(startMs / 1000);
  return h("a", { href: recordingAt(recordingId, startMs, true), class: "citation", "aria-label": `Play ${recordingId} from ${at}` }, `▶ ${at}`);
}

/** One chat message: its text with citation links in place, and (for retrieval scopes) the passages it drew on. */
export function messageView(m, sources = []) {
  const mine = m.role === "user";
  const parts = (m.parts?.length ? m.parts : [{ type: "text", text: m.content }]).map((p) =>
    p.type === "citation" ? citationLink(p.recording_id, p.start_ms) : p.text,
  );
  const by = m.model && m.provider && m.model !== m.provider ? `${m.model} (${m.provider})` : (m.model ?? m.provider);
  const who = mine ? "You" : `Parley${by ? ` · ${by}` : ""}`;
  return h(
    "article",
    { class: mine ? "message mine" : "message" },
    h("p", { class: "muted who" }, who, " · ", when(m.created_at)),
    h("p", { class: "message-text" }, ...parts),
    sources.length
      ? h(
          "details",
          {},
          h("summary", {}, `${sources.length} passage${sources.length === 1 ? "" : "s"} searched`),
          h("ul", {}, ...sources.map((s) => h("li", {}, citationLink(s.recording_id, s.start_ms), " ", s.chunk_text))),
        )
      : null,
  );
}

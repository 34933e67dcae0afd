import { h } from "../ui.js";
import { clockTime } from "./format.js";

/** A segment's text: its words one element each where it has their times (to mark the one being said), else the text. */
function segmentText(segment) {
  if (!segment.words?.length) return h("span", { class: "segment-text" }, segment.text);
  const words = segment.words.map((w) => h("span", { class: "word", "data-start": String(w.start) }, w.text));
  return h("span", { class: "segment-text" }, ...words.flatMap((w, i) => (i ? [" ", w] : [w])));
}

/**
 * The audio element and the transcript beside it. Each segment is a button (speaker, start
 * time, text): activating it seeks the audio to the segment's start, or to the word clicked
 * where the segment has word times. While the audio plays, the segment under the playhead is
 * marked aria-current and scrolled into view, and its word being said is marked too.
 * startMs/autoplay open the recording at an offset (a citation or a search hit).
 */
export function transcriptPlayer({ src, segments, startMs = null, autoplay = false }) {
  const audio = h("audio", { controls: "", preload: "metadata", src, "aria-label": "Recording audio" });
  const buttons = segments.map((s) =>
    h(
      "button",
      { type: "button", class: "segment", "data-start": String(s.start) },
      h("span", { class: "segment-time" }, clockTime(s.start)),
      h("span", { class: "segment-speaker" }, s.speaker ?? ""),
      segmentText(s),
    ),
  );
  const words = buttons.map((b) => [...b.querySelectorAll(".word")]);
  buttons.forEach((b, i) =>
    b.addEventListener("click", (event) => {
      const word = event.target.closest?.(".word");
      seek(word ? Number(word.dataset.start) : segments[i].start, true);
    }),
  );
  let current = -1;
  let currentWord = null;

  /** The segment's last word that started at or before the playhead: the one being said (or just said, in a pause). */
  function highlightWord(t) {
    let at = null;
    for (const w of words[current] ?? []) if (Number(w.dataset.start) <= t + 0.05) at = w;
    if (at === currentWord) return;
    currentWord?.classList.remove("current");
    currentWord = at;
    at?.classList.add("current");
  }

  function seek(seconds, play) {
    audio.currentTime = seconds;
    highlight();
    if (play) audio.play().catch(() => {}); // refused autoplay leaves the player paused at the spot
  }

  /** The last segment that started at or before the playhead. */
  function highlight() {
    const t = audio.currentTime;
    let at = -1;
    for (let i = 0; i < segments.length && segments[i].start <= t + 0.05; i++) at = i;
    if (at === current) return highlightWord(t);
    buttons[current]?.removeAttribute("aria-current");
    buttons[current]?.classList.remove("current");
    current = at;
    highlightWord(t);
    if (at < 0) return;
    buttons[at].setAttribute("aria-current", "true");
    buttons[at].classList.add("current");
    if (!audio.paused) buttons[at].scrollIntoView({ block: "nearest" });
  }

  audio.addEventListener("timeupdate", highlight);
  audio.addEventListener("seeked", highlight);
  if (startMs !== null) {
    // Before metadata the element has no duration to seek within: wait for it.
    const open = () => seek(startMs / 1000, autoplay);
    if (audio.readyState >= 1) open();
    else audio.addEventListener("loadedmetadata", open, { once: true });
  }

  const list = segments.length
    ? h("ol", { class: "segments", "aria-label": "Transcript segments" }, ...buttons.map((b) => h("li", {}, b)))
    : h("p", { class: "muted" }, "The transcript has no speech segments.");
  return { audio, transcript: list };
}

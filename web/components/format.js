// Small formatters shared by the pages; each returns text, never markup.

/** 75.4 -> "1:15": a media position as a person reads it. */
export function clockTime(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60));
  const ss = String(s % 60).padStart(2, "0");
  return h ? `${h}:${mm.padStart(2, "0")}:${ss}` : `${mm}:${ss}`;
}

/** A value or an em dash when the API says null (the field is always present). */
export const orDash = (v, unit = "") => (v === null || v === undefined || v === "" ? "—" : `${v}${unit}`);

export function megabytes(used, total) {
  if (used == null && total == null) return "—";
  return `${orDash(used)} of ${orDash(total)} MB`;
}

export function duration(seconds) {
  return seconds == null ? "—" : clockTime(seconds);
}

/** The link that opens a recording at an offset and starts playing there (citations, search hits). */
export function recordingAt(recordingId, ms, play = false) {
  return `#/recordings/${encodeURIComponent(recordingId)}?t=${Math.max(0, Math.round(ms))}${play ? "&play=1" : ""}`;
}

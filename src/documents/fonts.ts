// The typeface of the documents Parley writes (transcript exports, the chart's note PDF),
// imported `with { type: "file" }` so a compiled executable carries it (bun embeds the file
// and hands back a path it can read). pdfkit's own standard fonts cannot be used: its Node
// build reads them from its package folder at run time, which an executable lacks. DejaVu Sans Mono: free (the
// Bitstream Vera licence, fonts/LICENSE), monospaced so lines are counted in characters, and
// with the accents and scripts names carry, which the PDF standard fonts lack (decision 156).
import { readFileSync } from "node:fs";
import boldPath from "./fonts/DejaVuSansMono-Bold.ttf" with { type: "file" };
import regularPath from "./fonts/DejaVuSansMono.ttf" with { type: "file" };

/** The family name documents name the face by. */
export const FONT_FAMILY = "DejaVu Sans Mono";
/** A character's advance in the face, as a fraction of the font size. */
export const ADVANCE = 0.602;

let loaded: { regular: Buffer; bold: Buffer } | null = null;

/** The face's files, read once, at the first export (never at start). */
export function documentFonts(): { regular: Buffer; bold: Buffer } {
  loaded ??= { regular: readFileSync(regularPath), bold: readFileSync(boldPath) };
  return loaded;
}

import type PDFKit from "pdfkit";
import Helvetica from "pdfkit/standard-fonts/Helvetica";
import HelveticaBold from "pdfkit/standard-fonts/HelveticaBold";
// @ts-expect-error pdfkit's browser build has no declarations of its own; its API is pdfkit's, typed below.
import * as browserBuild from "../../../node_modules/pdfkit/js/pdfkit.browser.mjs";
import type { SummarySection } from "./schema";

/**
 * pdfkit's Node build loads its standard fonts with a run-time require of its package's
 * "#standard-fonts" imports, which a compiled executable cannot resolve (no package folder
 * there). Its browser build takes them registered instead: the fonts' data modules are
 * imported here, so the bundler carries them (decision 160). Same API otherwise.
 */
const { PDFDocument, registerStdFonts } = browserBuild as { PDFDocument: typeof PDFKit; registerStdFonts: (...fonts: object[]) => void };
registerStdFonts(Helvetica, HelveticaBold);

export type NotePdf = { title: string; subtitle: string; sections: SummarySection[]; unsupportedMark: string };

/**
 * A clinical note as a small PDF for the chart's attachment: title, the recording it comes
 * from, then each section's statements (bullets for lists), in Helvetica.
 */
export function notePdf(note: NotePdf, createdAt: Date): Promise<Buffer> {
  // Fixed dates in the PDF's info: the same summary exports the same bytes.
  const doc = new PDFDocument({
    size: "A4",
    margin: 56,
    info: { Title: note.title, Producer: "Parley", Creator: "Parley", CreationDate: createdAt, ModDate: createdAt },
  });
  const chunks: Buffer[] = [];
  doc.on("data", (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });
  doc.font("Helvetica-Bold").fontSize(16).text(note.title);
  doc.font("Helvetica").fontSize(9).fillColor("#555555").text(note.subtitle).fillColor("#000000");
  for (const section of note.sections) {
    doc.moveDown().font("Helvetica-Bold").fontSize(12).text(section.title);
    doc.font("Helvetica").fontSize(11);
    const lines = section.items.map((item) => `${section.list ? "- " : ""}${item.text}${item.supported ? "" : ` ${note.unsupportedMark}`}`);
    if (lines.length === 0) doc.fillColor("#555555").text("(nothing recorded)").fillColor("#000000");
    else if (section.list) for (const line of lines) doc.text(line);
    else doc.text(lines.join(" "));
  }
  doc.end();
  return done;
}

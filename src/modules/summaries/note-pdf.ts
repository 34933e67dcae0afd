import PDFDocument from "pdfkit";
import { documentFonts } from "../../documents/fonts";
import type { SummarySection } from "./schema";

export type NotePdf = { title: string; subtitle: string; sections: SummarySection[]; unsupportedMark: string };

/**
 * A clinical note as a small PDF for the chart's attachment: title, the recording it comes
 * from, then each section's statements (bullets for lists), in the embedded face
 * (names with accents print as they are).
 */
export function notePdf(note: NotePdf, createdAt: Date): Promise<Buffer> {
  const fonts = documentFonts();
  // The embedded face is the default, so pdfkit never reads its standard fonts (src/documents/fonts.ts).
  // Fixed dates in the PDF's info: the same summary exports the same bytes.
  const doc = new PDFDocument({
    font: fonts.regular as unknown as string,
    size: "A4",
    margin: 56,
    info: { Title: note.title, Producer: "Parley", Creator: "Parley", CreationDate: createdAt, ModDate: createdAt },
  });
  doc.registerFont("text", fonts.regular);
  doc.registerFont("bold", fonts.bold);
  const chunks: Buffer[] = [];
  doc.on("data", (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });
  doc.font("bold").fontSize(16).text(note.title);
  doc.font("text").fontSize(9).fillColor("#555555").text(note.subtitle).fillColor("#000000");
  for (const section of note.sections) {
    doc.moveDown().font("bold").fontSize(12).text(section.title);
    doc.font("text").fontSize(11);
    const lines = section.items.map((item) => `${section.list ? "- " : ""}${item.text}${item.supported ? "" : ` ${note.unsupportedMark}`}`);
    if (lines.length === 0) doc.fillColor("#555555").text("(nothing recorded)").fillColor("#000000");
    else if (section.list) for (const line of lines) doc.text(line);
    else doc.text(lines.join(" "));
  }
  doc.end();
  return done;
}

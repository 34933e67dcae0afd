import PDFDocument from "pdfkit";
import { ADVANCE, documentFonts } from "../../../documents/fonts";
import { CHARS_PER_LINE, type LegalDocument, LINES_PER_PAGE } from "./legal";

/** US Letter in points, as court transcripts are. */
const PAGE = { width: 612, height: 792 };
const TEXT_SIZE = 11;
const MARGIN_SIZE = 8;
/** Double spacing: 25 lines from the top rule down. */
const FIRST_LINE_Y = 84;
const LINE_SPACING = 25;
/** Line numbers, then the times, then the text: left to right. */
const NUMBER_X = 36;
const TIME_X = 60;
const TEXT_X = 108;

/** The legal transcript as a PDF: each page's 25 lines numbered, times in the left margin, "Page n of m" at its foot. */
export function renderLegalPdf(doc: LegalDocument, createdAt: Date): Promise<Uint8Array<ArrayBuffer>> {
  const fonts = documentFonts();
  // The face is the document's default, so pdfkit never reads its standard (AFM) fonts, which a compiled executable lacks.
  const pdf = new PDFDocument({
    size: [PAGE.width, PAGE.height],
    margin: 0,
    autoFirstPage: false,
    font: fonts.regular as unknown as string,
    info: { Title: doc.title, Producer: "Parley", Creator: "Parley", CreationDate: createdAt },
  });
  pdf.registerFont("text", fonts.regular);
  pdf.registerFont("bold", fonts.bold);
  const chunks: Uint8Array[] = [];
  pdf.on("data", (chunk: Uint8Array) => chunks.push(chunk));
  const done = new Promise<Uint8Array<ArrayBuffer>>((resolve, reject) => {
    pdf.on("end", () => resolve(Buffer.concat(chunks)));
    pdf.on("error", reject);
  });
  const textRight = TEXT_X + CHARS_PER_LINE * ADVANCE * TEXT_SIZE;
  doc.pages.forEach((page, p) => {
    pdf.addPage();
    // The rules of pleading paper: one under the top, one between the margin and the text.
    pdf
      .lineWidth(0.5)
      .moveTo(NUMBER_X, FIRST_LINE_Y - 14)
      .lineTo(textRight, FIRST_LINE_Y - 14)
      .stroke();
    pdf
      .moveTo(TEXT_X - 6, FIRST_LINE_Y - 14)
      .lineTo(TEXT_X - 6, FIRST_LINE_Y + LINES_PER_PAGE * LINE_SPACING)
      .stroke();
    page.forEach((line, i) => {
      const y = FIRST_LINE_Y + i * LINE_SPACING;
      pdf
        .font("text")
        .fontSize(MARGIN_SIZE)
        .text(String(i + 1).padStart(2, " "), NUMBER_X, y + 2, { lineBreak: false });
      if (line.time) pdf.text(line.time, TIME_X, y + 2, { lineBreak: false });
      if (line.text)
        pdf
          .font(line.bold ? "bold" : "text")
          .fontSize(TEXT_SIZE)
          .text(line.text, TEXT_X, y, { lineBreak: false });
    });
    const foot = `Page ${p + 1} of ${doc.pages.length}`;
    pdf
      .font("text")
      .fontSize(MARGIN_SIZE)
      .text(foot, 0, PAGE.height - 48, { width: PAGE.width, align: "center", lineBreak: false });
  });
  pdf.end();
  return done;
}

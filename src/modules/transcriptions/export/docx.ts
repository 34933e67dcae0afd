import { AlignmentType, CharacterSet, Document, Footer, LineRuleType, Packer, PageNumber, Paragraph, Tab, TabStopType, TextRun } from "docx";
import { FONT_FAMILY, documentFonts } from "../../../documents/fonts";
import type { LegalDocument } from "./legal";

/** Sizes in twentieths of a point (twips), text in half points, as Word counts them. */
const LETTER = { width: 12240, height: 15840 };
const MARGINS = { top: 1440, bottom: 1080, left: 720, right: 720, footer: 500 };
/** Double spacing, exactly: 25 lines fill the page between the margins, so Word breaks pages where the layout does. */
const LINE = 500;
const TEXT_SIZE = 22;
const MARGIN_SIZE = 16;
const TIME_TAB = 480;
const TEXT_TAB = 1440;

function lineParagraph(line: LegalDocument["pages"][number][number], number: number, newPage: boolean): Paragraph {
  // Word's own tab (w:tab) before the time and the text, so they stand at the tab stops.
  const run = (text: string, size: number, bold = false, tabbed = true) =>
    new TextRun({ children: tabbed ? [new Tab(), text] : [text], size, bold, font: FONT_FAMILY });
  return new Paragraph({
    pageBreakBefore: newPage,
    spacing: { line: LINE, lineRule: LineRuleType.EXACT, before: 0, after: 0 },
    tabStops: [
      { type: TabStopType.LEFT, position: TIME_TAB },
      { type: TabStopType.LEFT, position: TEXT_TAB },
    ],
    children: [run(String(number).padStart(2, " "), MARGIN_SIZE, false, false), run(line.time ?? "", MARGIN_SIZE), run(line.text, TEXT_SIZE, line.bold)],
  });
}

/** The legal transcript as a Word document: the same pages and numbered lines as the PDF, with the face embedded. */
export async function renderLegalDocx(doc: LegalDocument): Promise<Uint8Array<ArrayBuffer>> {
  const fonts = documentFonts();
  const footer = new Footer({
    children: [
      new Paragraph({
        alignment: AlignmentType.CENTER,
        children: [new TextRun({ children: ["Page ", PageNumber.CURRENT, " of ", PageNumber.TOTAL_PAGES], size: MARGIN_SIZE, font: FONT_FAMILY })],
      }),
    ],
  });
  const document = new Document({
    title: doc.title,
    creator: "Parley",
    lastModifiedBy: "Parley",
    fonts: [{ name: FONT_FAMILY, data: fonts.regular, bold: fonts.bold, characterSet: CharacterSet.ANSI }],
    sections: [
      {
        properties: { page: { size: LETTER, margin: MARGINS } },
        footers: { default: footer },
        children: doc.pages.flatMap((page, p) => page.map((line, i) => lineParagraph(line, i + 1, p > 0 && i === 0))),
      },
    ],
  });
  return new Uint8Array(await Packer.toBuffer(document));
}

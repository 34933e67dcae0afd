// pdfkit's standard fonts as data modules (package exports "./standard-fonts/*"): imported so
// a compiled executable carries them (note-pdf.ts).
declare module "pdfkit/standard-fonts/*" {
  const font: object;
  export default font;
}

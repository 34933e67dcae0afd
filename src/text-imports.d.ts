// The dashboard files, imported `with { type: "text" }` so a compiled executable embeds them.
declare module "*/web/app.js" {
  const text: string;
  export default text;
}
declare module "*.css" {
  const text: string;
  export default text;
}
// The simulator's sample conversations, imported `with { type: "file" }`: a path to read.
declare module "*.opus" {
  const path: string;
  export default path;
}

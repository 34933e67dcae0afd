// The dashboard files, imported `with { type: "text" }` so a compiled executable embeds them
// (src/modules/dashboard/assets.ts). Nothing else of ours is a .js file.
declare module "*.js" {
  const text: string;
  export default text;
}
declare module "*.css" {
  const text: string;
  export default text;
}
declare module "*.svg" {
  const text: string;
  export default text;
}
// The simulator's sample conversations, imported `with { type: "file" }`: a path to read.
declare module "*.opus" {
  const path: string;
  export default path;
}
// The typeface of the documents Parley writes (src/documents/fonts.ts), imported `with { type: "file" }`: a path to read.
declare module "*.ttf" {
  const path: string;
  export default path;
}
// The portal's web app manifest (src/modules/portal/assets.ts).
declare module "*.webmanifest" {
  const text: string;
  export default text;
}

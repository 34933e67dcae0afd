// Prompt files are imported `with { type: "text" }` so a compiled executable embeds them.
declare module "*.md" {
  const text: string;
  export default text;
}

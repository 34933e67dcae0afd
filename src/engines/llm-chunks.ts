import type { Llm } from "./llm";

/** Packs lines into chunks of at most `budget` tokens; a single longer line is cut by characters. */
export async function chunkLines(llm: Llm, lines: string[], budget: number): Promise<string[]> {
  const chunks: string[] = [];
  let current: string[] = [];
  let used = 0;
  for (const line of lines) {
    const tokens = await llm.countTokens(line);
    if (tokens > budget) {
      const pieces = Math.ceil(tokens / budget);
      const size = Math.ceil(line.length / pieces);
      for (let i = 0; i < line.length; i += size) chunks.push(line.slice(i, i + size));
      continue;
    }
    if (used + tokens > budget && current.length) {
      chunks.push(current.join("\n"));
      current = [];
      used = 0;
    }
    current.push(line);
    used += tokens + 1;
  }
  if (current.length) chunks.push(current.join("\n"));
  return chunks;
}

import type { ChatMessage } from "../../engines/llm";
import { queryWords } from "../search/service";
import type { Part } from "./schema";

/** A transcript passage given to the model, numbered from 1; citations can only point at these. */
export type Passage = { n: number; recordingId: string; startMs: number; endMs: number; speaker: string | null; text: string };

const SYSTEM = [
  "You answer questions about the user's recorded conversations.",
  "Use only the numbered transcript passages below. After each statement, cite the passage it comes from by its number in square brackets, for example [2].",
  "If the passages do not contain the answer, say so plainly. Do not invent passage numbers.",
].join(" ");

function clock(ms: number): string {
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

export function renderPassages(passages: Passage[]): string {
  return passages
    .map((p) => `[${p.n}] (recording ${p.recordingId}, ${clock(p.startMs)}-${clock(p.endMs)}${p.speaker ? `, ${p.speaker}` : ""}) ${p.text}`)
    .join("\n");
}

/** The chat for one turn: instructions and passages, the earlier turns, then the question. */
export function buildPrompt(passages: Passage[], history: ChatMessage[], question: string): ChatMessage[] {
  return [{ role: "system", content: `${SYSTEM}\n\nPassages:\n${renderPassages(passages)}` }, ...history, { role: "user", content: question }];
}

const MARKER = /\[(\d{1,4}(?:\s*[,;]\s*\d{1,4})*)\]/g;

/**
 * Splits model output into text and citation parts. A marker [n] becomes a citation of
 * passage n; numbers that name no passage given to the model are dropped, so no citation
 * ever points at an invented recording or offset.
 */
export function toParts(text: string, passages: Passage[]): Part[] {
  const byNumber = new Map(passages.map((p) => [p.n, p]));
  const parts: Part[] = [];
  const pushText = (t: string) => {
    if (!t) return;
    const last = parts[parts.length - 1];
    if (last?.type === "text") last.text += t;
    else parts.push({ type: "text", text: t });
  };
  let at = 0;
  for (const m of text.matchAll(MARKER)) {
    pushText(text.slice(at, m.index));
    at = m.index + m[0].length;
    for (const n of m[1]!.split(/[,;]/).map((x) => Number(x.trim()))) {
      const p = byNumber.get(n);
      const last = parts[parts.length - 1];
      if (!p || (last?.type === "citation" && last.recording_id === p.recordingId && last.start_ms === p.startMs)) continue;
      parts.push({ type: "citation", recording_id: p.recordingId, start_ms: p.startMs, speaker: p.speaker });
    }
  }
  pushText(text.slice(at));
  return parts
    .map((p): Part => (p.type === "text" ? { type: "text", text: p.text.replace(/[ \t]+\n/g, "\n").replace(/ {2,}/g, " ") } : p))
    .filter((p) => p.type !== "text" || p.text.trim() !== "");
}

/** The message content: the text parts alone, citations left to the parts. */
export function contentOf(parts: Part[]): string {
  return parts
    .filter((p): p is Extract<Part, { type: "text" }> => p.type === "text")
    .map((p) => p.text)
    .join("")
    .replace(/ +([.,;:!?])/g, "$1")
    .trim();
}

const overlap = (words: Set<string>, text: string) => queryWords(text).filter((w) => words.has(w)).length;

/**
 * The extractive provider: no model. It quotes the sentence that shares most words with
 * the question from each of the best passages, citing each. Deterministic, so it answers
 * on machines without a model and in tests.
 */
export function extractiveAnswer(question: string, passages: Passage[], ranked: boolean): string {
  const words = new Set(queryWords(question).filter((w) => w.length > 2));
  const scored = passages.map((p, i) => ({ p, i, score: overlap(words, p.text) }));
  // Retrieved passages come ranked already (meaning and keywords); a whole transcript is ranked here by shared words.
  const best = (
    ranked ? scored.filter((s) => s.score > 0 || words.size === 0) : scored.filter((s) => s.score > 0).sort((a, b) => b.score - a.score || a.i - b.i)
  ).slice(0, 3);
  if (best.length === 0) return "The recordings in this conversation do not mention that.";
  const quotes = best.map(({ p }) => {
    const sentences = p.text
      .match(/[^.!?]+[.!?]*/g)
      ?.map((s) => s.trim())
      .filter(Boolean) ?? [p.text];
    const sentence = sentences.reduce((a, b) => (overlap(words, b) > overlap(words, a) ? b : a));
    return `- "${sentence}" [${p.n}]`;
  });
  return `From the recordings:\n${quotes.join("\n")}`;
}

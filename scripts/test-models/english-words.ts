// Writes scripts/test-models/english-words.txt, the word list of the stand-in GGUF's
// vocabulary (decision 213), from festlex-poslex's Wall Street Journal part-of-speech lexicon
// (Debian package festlex-poslex: its words, lowercased, letters with at most one apostrophe).
// Run once by hand when the list should change; the generator reads the committed list, so
// the models do not depend on what a machine has installed.
// Usage: bun scripts/test-models/english-words.ts [/usr/share/festival/dicts/wsj.wp39.poslexR]
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const source = process.argv[2] ?? "/usr/share/festival/dicts/wsj.wp39.poslexR";
const WORD = /^[a-z]+('[a-z]+)?$/;
const words = new Set<string>();
for (const line of readFileSync(source, "latin1").split("\n")) {
  const word = /^\("([^"]+)"/.exec(line)?.[1]?.toLowerCase();
  if (word && WORD.test(word)) words.add(word);
}
const notice = [
  "# English words for the stand-in GGUF's vocabulary (scripts/test-models/gguf.ts, decision 213), one a line.",
  "# Derived from wsj.wp39.poslexR (Debian festlex-poslex) by scripts/test-models/english-words.ts: only its words, lowercased.",
  "# That lexicon: Centre for Speech Technology Research, University of Edinburgh, UK, Copyright (c) 1996,1997,",
  "# All Rights Reserved; free to use and distribute, with its notice kept (derived from the Penn Treebank's WSJ text).",
];
writeFileSync(join(import.meta.dir, "english-words.txt"), `${[...notice, ...[...words].sort()].join("\n")}\n`);
console.log(`${words.size} words`);

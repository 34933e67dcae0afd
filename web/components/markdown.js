import { h } from "../ui.js";

// The little Markdown a summary is written in (src/modules/summaries/templates.ts renders
// "# Title", "## Section", "- item" and paragraphs; a model may add **bold**, *emphasis*,
// `code` or a numbered list). Built as DOM nodes whose text is set as text, never parsed as
// HTML: whatever a transcript or a model put in a summary shows as the characters it is.

const HEADING = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
const ITEM = /^\s*([-*+]|\d{1,9}[.)])\s+(.*)$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const INLINE = /(`+)(.+?)\1|\*\*(?=\S)(.+?)\*\*|__(?=\S)(.+?)__|\*(?=\S)(.+?)\*|(?<!\w)_(?=\S)(.+?)_(?!\w)/g;

/** Inline spans of one line: code, strong and emphasis; everything else is text. Exported for a summary's statements. */
export function inlineMarkdown(text) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1]) out.push(h("code", {}, m[2]));
    else if (m[3] ?? m[4]) out.push(h("strong", {}, ...inlineMarkdown(m[3] ?? m[4])));
    else out.push(h("em", {}, ...inlineMarkdown(m[5] ?? m[6])));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/**
 * Markdown text as an array of block nodes (headings, lists, rules, paragraphs). Headings
 * move down `headingOffset` levels, so a summary's "#" sits under the page's own headings
 * (never below h6). A line break inside a paragraph stays a line break, as the writer saw it.
 */
export function markdown(text, { headingOffset = 0 } = {}) {
  const blocks = [];
  let paragraph = null;
  let list = null;
  for (const raw of String(text ?? "")
    .replace(/\r\n?/g, "\n")
    .split("\n")) {
    let m;
    if (!raw.trim()) {
      paragraph = list = null;
    } else if ((m = HEADING.exec(raw))) {
      paragraph = list = null;
      blocks.push(h(`h${Math.min(6, m[1].length + headingOffset)}`, {}, ...inlineMarkdown(m[2])));
    } else if (RULE.test(raw)) {
      paragraph = list = null;
      blocks.push(h("hr"));
    } else if ((m = ITEM.exec(raw))) {
      const tag = /\d/.test(m[1]) ? "ol" : "ul";
      if (list?.tagName.toLowerCase() !== tag) blocks.push((list = h(tag)));
      paragraph = null;
      list.append(h("li", {}, ...inlineMarkdown(m[2].trim())));
    } else if (list && /^\s/.test(raw)) {
      // An indented line goes on with the item above it.
      list.lastElementChild.append(" ", ...inlineMarkdown(raw.trim()));
    } else {
      list = null;
      if (paragraph) paragraph.append(h("br"));
      else blocks.push((paragraph = h("p")));
      paragraph.append(...inlineMarkdown(raw.trim()));
    }
  }
  return blocks;
}

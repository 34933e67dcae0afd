import { h } from "../ui.js";
import { clockTime, recordingAt } from "./format.js";
import { inlineMarkdown, markdown } from "./markdown.js";

/** A citation as a link that opens the recording at the segment and plays it. */
function citationLink(c) {
  const from = clockTime(c.start_ms / 1000);
  return h(
    "a",
    { class: "citation", href: recordingAt(c.recording_id, c.start_ms, true), "aria-label": `Play ${from} to ${clockTime(c.end_ms / 1000)}` },
    from,
  );
}

/** One statement, its Markdown inline, then its evidence: the moments it cites, or a mark that it cites none. */
function statement(item) {
  const evidence = item.supported
    ? h("span", { class: "citations" }, ...item.citations.map(citationLink))
    : h("span", { class: "unsupported-mark", title: "The model cited no moment of the recording for this." }, "no evidence");
  return h("span", { class: item.supported ? "statement" : "statement unsupported" }, ...inlineMarkdown(item.text), " ", evidence);
}

/**
 * A completed summary: the title, then each section's statements with the moments of the
 * recording they rest on as links that play them; a statement that cites none is marked
 * (decision 159). A summary made before citations shows its Markdown text as it was.
 */
export function summaryView(summary) {
  if (!summary.sections) return markdown(summary.text, { headingOffset: 3 });
  const title = typeof summary.structured?.title === "string" && summary.structured.title ? [h("h4", {}, ...inlineMarkdown(summary.structured.title))] : [];
  const sections = summary.sections
    .filter((s) => s.items.length > 0)
    .flatMap((s) => [
      h("h5", {}, s.title),
      s.list
        ? h("ul", {}, ...s.items.map((item) => h("li", {}, statement(item))))
        : h("p", {}, ...s.items.flatMap((item, i) => (i ? [" ", statement(item)] : [statement(item)]))),
    ]);
  return [...title, ...sections];
}

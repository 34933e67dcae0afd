import { h } from "../ui.js";

/** A description list of [term, value] pairs (value: text or a node). */
export function facts(pairs) {
  return h("dl", { class: "facts" }, ...pairs.flatMap(([term, value]) => [h("dt", {}, term), h("dd", {}, value ?? "—")]));
}

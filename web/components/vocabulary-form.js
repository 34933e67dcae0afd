import { field, formAlert, showError } from "./fields.js";
import { h } from "../ui.js";

/**
 * A configuration level's vocabulary (decision 158): the terms Whisper is prompted with, one
 * a line, most important first. `path` is the level's /config path (the project, an end
 * user). PUT replaces a level, so what else it sets is sent back unchanged. Null when the
 * person may not read the configuration (a role without config:read, as through break-glass):
 * the page shows the rest.
 */
export async function vocabularyForm(ctx, path, { label }) {
  const level = await ctx.api(path).catch((err) => {
    if (err.status === 403) return null;
    throw err;
  });
  if (!level) return null;
  const own = level.overrides.vocabulary ?? [];
  const inherited = level.effective.vocabulary.filter((t) => !own.some((o) => o.toLowerCase() === t.toLowerCase()));
  const terms = h("textarea", { name: "vocabulary", rows: 5, autocomplete: "off", spellcheck: "false" });
  terms.value = own.join("\n");
  const form = h(
    "form",
    { class: "stack", novalidate: "" },
    field(label, terms, {
      param: "vocabulary",
      hint: `Names and terms to recognise (drugs, clients, matters, people), one a line, most important first.${inherited.length ? ` Also applied: ${inherited.join(", ")}.` : ""}`,
    }),
    h("button", { type: "submit" }, "Save vocabulary"),
    formAlert(),
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const current = await ctx.api(path);
    const body = Object.fromEntries(Object.entries(current.overrides).filter(([k, v]) => v !== null && !(k === "settings" && Object.keys(v).length === 0)));
    const typed = terms.value
      .split("\n")
      .map((t) => t.trim())
      .filter(Boolean);
    if (typed.length) body.vocabulary = typed;
    else delete body.vocabulary;
    try {
      await ctx.api(path, { method: "PUT", body });
      ctx.refresh();
    } catch (err) {
      showError(form, err);
    }
  });
  return h("details", { class: "panel", open: own.length > 0 }, h("summary", {}, "Vocabulary"), form);
}

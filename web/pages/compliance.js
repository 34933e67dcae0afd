import "../components/stylesheet.js";
import { actorLabel } from "../components/actor.js";
import { endUserSelect } from "../components/end-user-select.js";
import { field, formAlert, select, showError, textInput } from "../components/fields.js";
import { nameBook } from "../components/names.js";
import { pagedTable } from "../components/table.js";
import { adminApi, apiUrl } from "../api.js";
import { confirmDialog, h, statusBadge, when } from "../ui.js";
import { breakGlassSection } from "./compliance/break-glass.js";

// What a compliance officer asks of the appliance (issue 19): "keep everything of this
// patient for the lawsuit" (legal holds), "delete everything older than seven years"
// (retention), "give the court everything, provably complete" (exports) and "who listened
// to this recording" (the access audit log, filtered by the recording's id). All through
// the public API.

const TARGETS = [
  ["end_user_id", "End user"],
  ["device_id", "Device"],
  ["recording_id", "Recording"],
];

/** Compliance: legal holds (place, release) and the access audit log with its filters. */
export async function render(view, ctx) {
  const breakGlass = await breakGlassSection(ctx);
  // A viewer comes here for break-glass alone (a support case); the rest is compliance's (decision 136).
  if (ctx.session.admin.role === "viewer") return void view.replaceChildren(h("h1", {}, "Compliance"), breakGlass);
  const names = nameBook(ctx.api);
  const holds = pagedTable({
    api: ctx.api,
    path: "/legal-holds",
    caption: "Legal holds",
    prepare: names.load,
    empty: "No legal holds.",
    columns: [
      { title: "Matter", cell: (x) => x.matter },
      { title: "Covers", cell: (x) => coverOf(x, names) },
      { title: "Status", cell: (x) => statusBadge(x.status) },
      { title: "Placed", cell: (x) => when(x.created_at) },
      { title: "Note", cell: (x) => x.note ?? "—" },
      {
        title: "",
        cell: (x) =>
          x.status === "active" ? h("button", { type: "button", onclick: () => release(ctx, x, holds) }, `Release ${x.matter}`) : when(x.released_at),
      },
    ],
  });
  const audit = pagedTable({
    api: ctx.api,
    path: "/audit-events",
    query: Object.fromEntries([...ctx.query].filter(([, v]) => v)),
    caption: "Audit log",
    empty: "No audit events match.",
    columns: [
      { title: "When", cell: (e) => when(e.created_at) },
      { title: "Action", cell: (e) => e.action },
      { title: "Actor", cell: (e) => actorLabel(e.actor) },
      { title: "Resources", cell: (e) => h("span", { class: "ids" }, e.resource_ids.join(", ")) },
      { title: "From", cell: (e) => e.client_address ?? "—" },
      { title: "Request", cell: (e) => h("code", {}, e.request_id ?? "—") },
    ],
  });
  // The organization's own rows (sign-ins, accounts and roles): no project's log holds them; owners and compliance read them.
  const organization = ["owner", "compliance"].includes(ctx.session.admin.role)
    ? pagedTable({
        api: adminApi,
        path: "/audit-events",
        caption: "Sign-ins and accounts",
        empty: "No sign-ins or account changes yet.",
        columns: [
          { title: "When", cell: (e) => when(e.created_at) },
          { title: "Action", cell: (e) => e.action },
          { title: "Actor", cell: (e) => actorLabel(e.actor) },
          { title: "From", cell: (e) => e.client_address ?? "—" },
        ],
      })
    : null;
  const exports = pagedTable({
    api: ctx.api,
    path: "/exports",
    caption: "Exports",
    prepare: names.load,
    empty: "No exports yet.",
    columns: [
      { title: "Matter", cell: (x) => x.matter ?? "—" },
      { title: "Covers", cell: (x) => (x.end_user_id ? names.link("end_user_id", x.end_user_id) : `${x.recording_ids.length} recordings`) },
      { title: "Status", cell: (x) => statusBadge(x.status) },
      { title: "Started", cell: (x) => when(x.created_at) },
      {
        title: "Archive",
        cell: (x) =>
          x.status === "completed"
            ? h("a", { href: apiUrl(`/exports/${x.id}/download`), download: `${x.id}.zip` }, `Download ${x.matter ?? x.id}`)
            : (x.error?.message ?? "—"),
      },
      { title: "SHA-256", cell: (x) => (x.sha256 ? h("code", { class: "ids" }, x.sha256) : "—") },
    ],
  });
  if (ctx.signal?.aborted) return;
  view.replaceChildren(
    h("h1", {}, "Compliance"),
    breakGlass,
    h("h2", {}, "Legal holds"),
    h("p", { class: "muted" }, "While a hold is active, what it covers cannot be deleted and retention leaves it alone."),
    holds.el,
    holdForm(ctx, holds),
    h("h2", {}, "Retention"),
    await retentionForm(ctx),
    h("h2", {}, "Exports"),
    h(
      "p",
      { class: "muted" },
      "An archive of the original audio, transcripts (JSON, SRT, VTT, TXT), summaries, the chain of custody from the audit log and a manifest with every file's SHA-256. Check it with parley export verify.",
    ),
    exports.el,
    await exportForm(ctx, exports),
    h("h2", {}, "Audit log"),
    h(
      "p",
      { class: "muted" },
      "Every read of audio, transcripts, summaries, search results and Ask context, every deletion, hold and key change. Give a recording's id to see who accessed it.",
    ),
    auditFilters(ctx),
    audit.el,
    ...(organization
      ? [
          h("h2", {}, "Sign-ins and accounts"),
          h(
            "p",
            { class: "muted" },
            "Dashboard sign-ins and sign-outs (password or single sign-on), refused sign-ins, and changes to accounts and roles, in every project.",
          ),
          organization.el,
        ]
      : []),
  );
  await Promise.all([holds.load(), audit.load(), organization?.load()]);
  followExports(ctx, exports);
}

/** An export is built by a job: the list follows it until none is processing. */
function followExports(ctx, table) {
  const stop = ctx.poll(async () => {
    const page = await table.reload();
    if (!page.data.some((x) => x.status === "processing")) stop();
  }, 2_000);
}

const WRITES_CONFIGURATION = new Set(["owner", "admin"]);

/** The project's retention (this mode): days, "keep", or empty to inherit the organization's. */
async function retentionForm(ctx) {
  const level = await ctx.api("/config/project");
  // Retention is part of the project's configuration, which owners and admins write; a
  // compliance officer reads what applies and asks them to change it (decision 136).
  if (!WRITES_CONFIGURATION.has(ctx.session.admin.role)) {
    const kept = (key) => (level.effective[key] == null ? "kept" : `${level.effective[key]} days`);
    return h(
      "div",
      {},
      h("p", {}, `Audio: ${kept("retention_audio_days")}. Transcripts: ${kept("retention_transcript_days")}.`),
      h("p", { class: "muted" }, "An owner or administrator changes retention."),
    );
  }
  const value = (key) => level.overrides[key] ?? "";
  const form = h(
    "form",
    { class: "stack", novalidate: "" },
    field("Delete audio after (days)", textInput("retention_audio_days", value("retention_audio_days"), { autocomplete: "off" }), {
      param: "retention_audio_days",
      hint: `Now: ${level.effective.retention_audio_days ?? "kept"}. Empty inherits; keep keeps forever.`,
    }),
    field("Delete transcripts after (days)", textInput("retention_transcript_days", value("retention_transcript_days"), { autocomplete: "off" }), {
      param: "retention_transcript_days",
      hint: `Now: ${level.effective.retention_transcript_days ?? "kept"}.`,
    }),
    h("button", { type: "submit" }, "Save retention"),
    formAlert(),
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    // PUT replaces the level: what else this project sets is sent back unchanged.
    const current = await ctx.api("/config/project");
    const body = Object.fromEntries(Object.entries(current.overrides).filter(([k, v]) => v !== null && !(k === "settings" && Object.keys(v).length === 0)));
    for (const key of ["retention_audio_days", "retention_transcript_days"]) {
      const typed = String(new FormData(form).get(key)).trim();
      if (typed === "") delete body[key];
      else body[key] = /^\d+$/.test(typed) ? Number(typed) : typed;
    }
    try {
      await ctx.api("/config/project", { method: "PUT", body });
      ctx.refresh();
    } catch (err) {
      showError(form, err);
    }
  });
  return form;
}

async function exportForm(ctx, table) {
  const form = h(
    "form",
    { class: "stack", novalidate: "" },
    field("Case or matter", textInput("matter", "", { autocomplete: "off" }), { param: "matter" }),
    field("End user", await endUserSelect(ctx.api), { param: "end_user_id", hint: "Everything of this end user." }),
    field("Created after", textInput("created_after", "", { autocomplete: "off" }), { param: "created_after", hint: "ISO time, optional" }),
    field("Created before", textInput("created_before", "", { autocomplete: "off" }), { param: "created_before" }),
    field("Passphrase", h("input", { type: "password", name: "passphrase", autocomplete: "new-password" }), {
      param: "passphrase",
      hint: "Optional: encrypts the archive (12 characters or more).",
    }),
    h("button", { type: "submit" }, "Start export"),
    formAlert(),
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = Object.fromEntries(
      [...new FormData(form)].filter(([, v]) => String(v).trim() !== "").map(([k, v]) => [k, k === "passphrase" ? String(v) : String(v).trim()]),
    );
    try {
      await ctx.api("/exports", { method: "POST", body });
      form.reset();
      followExports(ctx, table);
    } catch (err) {
      showError(form, err);
    }
  });
  return h("details", { class: "panel" }, h("summary", {}, "Export for eDiscovery"), form);
}

/** What a hold covers, by name: "End user Ada Lovelace". */
const coverOf = (hold, names) => {
  const [param, label] = TARGETS.find(([p]) => hold[p]) ?? [];
  if (!param) return "—";
  return h("span", {}, `${label} `, names.link(param, hold[param]));
};

async function release(ctx, hold, table) {
  if (!(await confirmDialog(`Release the hold “${hold.matter}”? What it covers can then be deleted again.`, "Release"))) return;
  await ctx.api(`/legal-holds/${hold.id}/release`, { method: "POST" });
  await table.reload();
}

function holdForm(ctx, table) {
  const kind = select("target", TARGETS, "end_user_id");
  const form = h(
    "form",
    { class: "stack", novalidate: "" },
    field("Matter", textInput("matter", "", { autocomplete: "off" }), { param: "matter", hint: "The case or request the hold is for." }),
    field("Covers", kind),
    field("Id", textInput("target_id", "", { autocomplete: "off" }), { param: "end_user_id", hint: "eu_…, dev_… or rec_…" }),
    field("Note", textInput("note", "", { autocomplete: "off" }), { param: "note" }),
    h("button", { type: "submit" }, "Place hold"),
    formAlert(),
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const data = new FormData(form);
    const body = { matter: String(data.get("matter")).trim(), [String(data.get("target"))]: String(data.get("target_id")).trim() };
    const note = String(data.get("note")).trim();
    if (note) body.note = note;
    try {
      await ctx.api("/legal-holds", { method: "POST", body });
      form.reset();
      await table.reload();
    } catch (err) {
      showError(form, err);
    }
  });
  return h("details", { class: "panel" }, h("summary", {}, "Place a legal hold"), form);
}

/** The audit filters as a form whose values live in the page's query, so a filtered view is a link. */
function auditFilters(ctx) {
  const input = (name) => textInput(name, ctx.query.get(name) ?? "", { autocomplete: "off" });
  const form = h(
    "form",
    { class: "filters", role: "search", "aria-label": "Filter the audit log" },
    field("Resource id", input("resource_id")),
    field("Actor id", input("actor_id")),
    field("Action", input("action"), { hint: "e.g. recording.audio.read" }),
    field("After", input("created_after"), { hint: "ISO time" }),
    field("Before", input("created_before")),
    h("button", { type: "submit" }, "Filter"),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const params = new URLSearchParams([...new FormData(form)].filter(([, v]) => String(v).trim()).map(([k, v]) => [k, String(v).trim()]));
    ctx.navigate(`#/compliance${params.size ? `?${params}` : ""}`);
  });
  return form;
}

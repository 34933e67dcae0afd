// The Parley dashboard: a thin client of the public /v1 API, signed in with an API key
// kept in sessionStorage (this tab only). It has no powers the API does not give the key.
const $ = (sel) => document.querySelector(sel);
const view = $("#view");
let key = sessionStorage.getItem("parley.key");

async function api(path, options = {}) {
  const res = await fetch(`/v1${path}`, { ...options, headers: { authorization: `Bearer ${key}`, ...(options.headers ?? {}) } });
  if (res.status === 204) return null;
  const body = await res.json().catch(() => null);
  if (!res.ok) throw Object.assign(new Error(body?.error?.message ?? `HTTP ${res.status}`), { status: res.status, code: body?.error?.code });
  return body;
}

const esc = (v) => String(v ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
const when = (iso) => (iso ? new Date(iso).toLocaleString() : "—");
const badge = (text, tone = "") => `<span class="badge ${tone}">${esc(text)}</span>`;
const GOOD = new Set(["completed", "bound", "uploaded", "executed", "applied", "succeeded", "enabled"]);
const BAD = new Set(["failed", "integrity_failure", "expired", "dead", "disabled"]);
const status = (s) => badge(s, GOOD.has(s) ? "good" : BAD.has(s) ? "bad" : "");
const online = (last) => (last && Date.now() - new Date(last).getTime() < 15 * 60_000 ? badge("online", "good") : badge("offline"));

function table(columns, rows, onClick) {
  if (!rows.length) return `<p class="muted">Nothing here yet.</p>`;
  const head = columns.map(([title]) => `<th>${esc(title)}</th>`).join("");
  const body = rows.map((row, i) => `<tr class="${onClick ? "link" : ""}" data-i="${i}">${columns.map(([, cell]) => `<td>${cell(row)}</td>`).join("")}</tr>`).join("");
  return `<table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

function bindRows(rows, onClick) {
  if (!onClick) return;
  for (const tr of view.querySelectorAll("tr[data-i]")) tr.addEventListener("click", () => onClick(rows[Number(tr.dataset.i)]));
}

async function listView(title, path, columns, onClick) {
  const page = await api(path);
  view.innerHTML = `<h2>${esc(title)} <span class="muted">${page.total ?? page.data.length}</span></h2>${table(columns, page.data, onClick)}`;
  bindRows(page.data, onClick);
}

const views = {
  "end-users": () =>
    listView("End users", "/end-users?limit=100", [
      ["Name", (u) => esc(u.name ?? "—")],
      ["External id", (u) => esc(u.external_id ?? "—")],
      ["Email", (u) => esc(u.email ?? "—")],
      ["Created", (u) => when(u.created_at)],
    ]),
  devices: () =>
    listView("Devices", "/devices?limit=100", [
      ["Serial", (d) => esc(d.serial_number)],
      ["Model", (d) => esc(d.model)],
      ["Status", (d) => status(d.status)],
      ["Reachable", (d) => online(d.last_heartbeat_at)],
      ["Battery", (d) => (d.battery_percent == null ? "—" : `${d.battery_percent}%`)],
      ["Recording", (d) => esc(d.recording_state?.device_state ?? "—")],
      ["Last heartbeat", (d) => when(d.last_heartbeat_at)],
    ]),
  recordings: () =>
    listView(
      "Recordings",
      "/recordings?limit=100",
      [
        ["Name", (r) => esc(r.name ?? r.id)],
        ["Status", (r) => status(r.status)],
        ["Duration", (r) => (r.duration_seconds == null ? "—" : `${r.duration_seconds} s`)],
        ["Recorded", (r) => when(r.recorded_at)],
        ["Source", (r) => esc(r.source)],
      ],
      (r) => (location.hash = `#/recordings/${r.id}`),
    ),
  webhooks: async () => {
    const page = await api("/webhooks?limit=100");
    view.innerHTML = `<h2>Webhooks <span class="muted">${page.data.length}</span></h2>${table(page.data.length ? [
      ["URL", (w) => esc(w.url)],
      ["Events", (w) => esc(w.events.join(", "))],
      ["State", (w) =>
        w.disabled_at
          ? `${status("disabled")} <span class="muted">since ${when(w.disabled_at)}, after 3 days of failures; retry a delivery to re-enable</span>`
          : w.failing_since
            ? `${badge("failing", "bad")} <span class="muted">since ${when(w.failing_since)}; disabled after 3 days</span>`
            : status("enabled")],
      ["Created", (w) => when(w.created_at)],
    ] : [], page.data)}`;
  },
};

async function recordingView(id) {
  const rec = await api(`/recordings/${id}`);
  const audio = await fetch(`/v1/recordings/${id}/audio`, { headers: { authorization: `Bearer ${key}` } });
  const src = audio.ok ? URL.createObjectURL(await audio.blob()) : null;
  const txns = await api(`/transcriptions?recording_id=${id}`).catch(() => ({ data: [] }));
  const latest = txns.data.find((t) => t.status === "completed") ?? txns.data[0];
  const summaries = latest ? await api(`/summaries?transcription_id=${latest.id}`).catch(() => ({ data: [] })) : { data: [] };
  view.innerHTML = `
    <p><a href="#/recordings">← Recordings</a></p>
    <h2>${esc(rec.name ?? rec.id)} ${status(rec.status)}</h2>
    <p class="muted">Recorded ${when(rec.recorded_at)} · ${rec.duration_seconds ?? "?"} s · ${esc(rec.mime_type ?? "")}</p>
    ${src ? `<audio controls src="${src}"></audio>` : `<p class="muted">No audio uploaded yet.</p>`}
    <h3>Transcript ${latest ? status(latest.status) : ""}</h3>
    ${latest?.segments?.length ? `<div class="segments">${latest.segments.map((s) => `<p><span class="t">${s.start.toFixed(1)}s</span><b>${esc(s.speaker)}</b> ${esc(s.text)}</p>`).join("")}</div>` : `<p class="muted">${esc(latest?.error?.message ?? "No transcript yet.")}</p>`}
    <h3>Summaries</h3>
    ${summaries.data.map((s) => `<h4>${esc(s.template)} ${status(s.status)}</h4><pre>${esc(s.text ?? s.error?.message ?? "")}</pre>`).join("") || `<p class="muted">No summaries yet.</p>`}`;
}

async function route() {
  const signedIn = Boolean(key);
  $("#sign-in").hidden = signedIn;
  $("#nav").hidden = !signedIn;
  $("#sign-out").hidden = !signedIn;
  $("#who").textContent = signedIn ? `${key.slice(0, key.indexOf("_", 3) + 1)}…${key.slice(-4)}` : "";
  if (!signedIn) return void (view.innerHTML = "");
  const [, name = "recordings", id] = location.hash.split("/");
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.getAttribute("href") === `#/${name}`);
  view.innerHTML = `<p class="muted">Loading…</p>`;
  try {
    await (id && name === "recordings" ? recordingView(id) : (views[name] ?? views.recordings)());
  } catch (err) {
    if (err.status === 401) return signOut();
    view.innerHTML = `<p class="error">${esc(err.message)}</p>`;
  }
}

function signOut() {
  key = null;
  sessionStorage.removeItem("parley.key");
  route();
}

$("#sign-in").addEventListener("submit", async (e) => {
  e.preventDefault();
  key = new FormData(e.target).get("key").trim();
  try {
    await api("/end-users?limit=1").catch((err) => {
      if (err.status !== 403) throw err; // a restricted key without end_users:read is still a key
    });
    sessionStorage.setItem("parley.key", key);
    $("#sign-in-error").textContent = "";
    route();
  } catch (err) {
    key = null;
    $("#sign-in-error").textContent = err.status === 401 ? "That key is not valid on this appliance." : err.message;
  }
});
// Which engines lack their model, from the public health endpoint (no key needed, nothing
// secret): shown to everyone, signed in or not, with the command that installs each one.
async function showModelsNotice() {
  const health = await fetch("/v1/health").then((r) => (r.ok ? r.json() : null)).catch(() => null);
  const models = health?.models;
  const entries = Array.isArray(models) ? models.map((m) => [m.engine, m]) : Object.entries(models ?? {});
  const missing = entries.filter(([, m]) => m && (m.installed === false || m.status === "missing" || m.status === "partial"));
  const notice = $("#models-notice");
  notice.hidden = !missing.length;
  if (!missing.length) return;
  const line = (...parts) => {
    const p = document.createElement("p");
    for (const part of parts) p.append(typeof part === "string" ? document.createTextNode(part) : part);
    return p;
  };
  const code = (text) => Object.assign(document.createElement("code"), { textContent: text });
  notice.replaceChildren(
    line("Models not installed: transcripts, summaries, search and Ask need them; everything else works. On the appliance run:"),
    ...missing.map(([engine, m]) => line(code(`parley models pull ${m.model ?? m.name}`), ` (${engine})`)),
    line("or ", code("parley models import PATH"), " on an air-gapped machine, from a folder copied from one that pulled them."),
  );
}

$("#sign-out").addEventListener("click", signOut);
showModelsNotice();
window.addEventListener("hashchange", route);
route();

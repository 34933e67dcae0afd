// The administrator's session in the shell: first-run setup, sign-in and out, the project
// and mode switcher, and the models notice. The server keeps the session (decision 094).
import { adminApi, api, ApiError, setCsrfToken } from "./api.js";
import { h, showFormError } from "./ui.js";

const $ = (sel) => document.querySelector(sel);

/** Shows the sign-in or setup form alone, submitting its values with `send`; the session it returns signs in. */
function showGate(formId, send, signedIn) {
  const gate = $("#gate");
  gate.replaceChildren($(`#${formId}-template`).content.cloneNode(true));
  gate.hidden = false;
  for (const el of ["#nav", "#switcher", "#sign-out", "#view"]) $(el).hidden = true;
  $("#who").textContent = "";
  const form = $(`#${formId}`);
  const errorLine = $(`#${formId}-error`);
  const button = form.querySelector("button[type=submit]");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    errorLine.textContent = "";
    button.disabled = true;
    try {
      signedIn(await send(formValues(form)));
    } catch (err) {
      errorLine.textContent = err.message;
      button.disabled = false;
    }
  });
  form.querySelector("input").focus();
  return form;
}

function showShell(session) {
  setCsrfToken(session.csrf_token);
  $("#gate").hidden = true;
  $("#gate").replaceChildren();
  for (const el of ["#nav", "#switcher", "#sign-out", "#view"]) $(el).hidden = false;
  $("#who").textContent = session.admin.email;
  const projects = $("#project-select");
  projects.replaceChildren(...session.projects.map((p) => h("option", { value: p.id, selected: p.id === session.tenant?.project_id }, p.name)));
  if (!session.projects.length) projects.append(h("option", { value: "" }, "No project yet"));
  projects.disabled = !session.projects.length;
  $("#mode-select").value = session.tenant?.mode ?? "test";
  $("#mode-select").disabled = !session.tenant;
  // Live mode touches real data: say so all the time.
  document.body.classList.toggle("mode-live", session.tenant?.mode === "live");
}

/** Shows the setup form (no administrator yet) or the sign-in form. */
async function showSignedOut(signedIn) {
  const setup = await adminApi("/setup").catch(() => ({ open: false }));
  if (!setup.open) return void showGate("sign-in", (body) => adminApi("/session", { method: "POST", body }), signedIn);
  showGate("setup", (body) => adminApi("/setup", { method: "POST", body }), signedIn);
  $("#setup-token-field").hidden = setup.from_loopback;
  $("#setup-token-help").hidden = setup.from_loopback;
  $("#setup-token-field input").required = !setup.from_loopback;
}

function formValues(form) {
  return Object.fromEntries(new FormData(form).entries());
}

function newProjectDialog(onCreated) {
  const dialog = h("dialog", { "aria-labelledby": "new-project-title" });
  const form = h(
    "form",
    { class: "card" },
    h("h2", { id: "new-project-title" }, "New project"),
    h("label", {}, "Project name ", h("input", { name: "name", required: true, maxlength: 64, autocomplete: "off" })),
    h("div", { class: "actions" }, h("button", { type: "button", onclick: () => dialog.close() }, "Cancel"), h("button", { type: "submit" }, "Create project")),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const project = await adminApi("/projects", { method: "POST", body: formValues(form) });
      dialog.close();
      await onCreated(project);
    } catch (err) {
      if (err instanceof ApiError) showFormError(form, err);
      else throw err;
    }
  });
  dialog.addEventListener("close", () => dialog.remove());
  dialog.append(form);
  document.body.append(dialog);
  dialog.showModal();
}

/** The models notice: before signing in too, since an operator should hear it first (GET /v1/health needs no key). */
async function showModelsNotice() {
  const health = await api("/health").catch(() => null);
  const missing = (health?.models ?? []).filter((m) => m.install);
  const notice = $("#models-notice");
  notice.hidden = !missing.length;
  if (!missing.length) return;
  notice.replaceChildren(
    h("p", {}, "Models not installed: transcripts, summaries, search and Ask need them; everything else works. On the appliance run:"),
    ...missing.map((m) => h("p", {}, h("code", {}, m.install), ` (${m.engine})`)),
    h("p", {}, "or ", h("code", {}, "parley models import PATH"), " on an air-gapped machine, from a folder copied from one that pulled them."),
  );
}

/** Starts the shell: the session if there is one, else sign-in or setup; calls back on each change. */
export async function startSession({ onSignedIn, onSignedOut }) {
  const signedIn = (session) => {
    showShell(session);
    onSignedIn(session);
  };
  const signedOut = () => {
    setCsrfToken(null);
    onSignedOut();
    return showSignedOut(signedIn);
  };
  $("#sign-out").addEventListener("click", async () => {
    await adminApi("/session", { method: "DELETE" }).catch(() => null);
    signedOut();
  });
  const switchTenant = async (projectId, mode) => signedIn(await adminApi("/session/tenant", { method: "PUT", body: { project_id: projectId, mode } }));
  $("#project-select").addEventListener("change", (e) => switchTenant(e.target.value, $("#mode-select").value));
  $("#mode-select").addEventListener("change", (e) => switchTenant($("#project-select").value, e.target.value));
  $("#new-project").addEventListener("click", () => newProjectDialog((project) => switchTenant(project.id, "test")));
  // Any 401 from a page means the session ended (idle, too old, signed out elsewhere).
  addEventListener("parley:unauthorized", () => {
    if ($("#gate").hidden) signedOut();
  });

  showModelsNotice();
  try {
    signedIn(await adminApi("/session"));
  } catch (err) {
    if (err?.status !== 401) throw err;
    // The 401 listener above has shown the gate already.
  }
}

// The administrator's session in the shell: first-run setup, sign-in and out, the project
// and mode switcher, and the models notice. The server keeps the session (decision 094).
import { adminApi, ApiError, setCsrfToken } from "./api.js";
import { adviceParagraphs, modelsAdvice } from "./components/models-advice.js";
import { enrolmentSection } from "./components/second-factor.js";
import { offerSso, showSsoRefused, takeSsoRefusal } from "./sso.js";
import { h, showFormError } from "./ui.js";

const $ = (sel) => document.querySelector(sel);

/** Shows the sign-in or setup form alone, submitting its values with `send`; the session it returns signs in. */
function showGate(formId, send, signedIn) {
  const gate = $("#gate");
  gate.replaceChildren($(`#${formId}-template`).content.cloneNode(true));
  gate.hidden = false;
  hideShell();
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

function hideShell() {
  for (const el of ["#nav", "#switcher", "#sign-out", "#menu-toggle", "#view"]) $(el).hidden = true;
  setMenuOpen(false);
  $("#who").textContent = "";
}

function showShell(session) {
  setCsrfToken(session.csrf_token);
  $("#gate").hidden = true;
  $("#gate").replaceChildren();
  for (const el of ["#nav", "#switcher", "#sign-out", "#menu-toggle", "#view"]) $(el).hidden = false;
  $("#who").textContent = session.admin.email;
  // Links to what the role can never use are hidden; the server refuses them anyway (decision 136).
  for (const el of document.querySelectorAll("[data-roles]")) el.hidden = !el.dataset.roles.split(" ").includes(session.admin.role);
  const projects = $("#project-select");
  projects.replaceChildren(...session.projects.map((p) => h("option", { value: p.id, selected: p.id === session.tenant?.project_id }, p.name)));
  if (!session.projects.length) projects.append(h("option", { value: "" }, "No project yet"));
  projects.disabled = !session.projects.length;
  $("#mode-select").value = session.tenant?.mode ?? "test";
  $("#mode-select").disabled = !session.tenant;
  // Live mode touches real data: say so all the time.
  document.body.classList.toggle("mode-live", session.tenant?.mode === "live");
}

/** The phone's Menu (the project switcher and sign-out): open or closed. */
function setMenuOpen(open) {
  $("#menu-toggle").setAttribute("aria-expanded", String(open));
  $("header").classList.toggle("menu-open", open);
}

/** After a right password: the session, or the second step when the account has a second factor (decision 151). */
const afterPassword = (signedIn) => (result) =>
  result.second_factor_required
    ? showGate("second-factor", ({ code }) => adminApi("/session/second-factor", { method: "POST", body: { challenge: result.challenge, code } }), signedIn)
    : signedIn(result);

/** A session held to enrolment (PARLEY_REQUIRE_MFA): the server refuses it all else, so the shell shows only this. */
function showEnrolmentGate(session, signedIn) {
  setCsrfToken(session.csrf_token);
  const gate = $("#gate");
  for (const el of ["#nav", "#switcher", "#menu-toggle", "#view"]) $(el).hidden = true;
  $("#sign-out").hidden = false;
  $("#who").textContent = session.admin.email;
  gate.replaceChildren(
    h("p", { class: "card" }, "This appliance requires a second factor for every account: set yours up to continue."),
    enrolmentSection(async () => signedIn(await adminApi("/session"))),
  );
  gate.hidden = false;
}

/** Shows the setup form (no administrator yet) or the sign-in form. */
async function showSignedOut(signedIn) {
  const setup = await adminApi("/setup").catch(() => ({ open: false }));
  if (!setup.open) {
    showGate("sign-in", (body) => adminApi("/session", { method: "POST", body }), afterPassword(signedIn));
    return void offerSso(setup.sso);
  }
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

/**
 * The models notice, for a signed-in administrator only (the setup and sign-in pages stay
 * clean), with the same advice as the System page (components/models-advice.js).
 */
async function showModelsNotice() {
  const notice = $("#models-notice");
  const report = await adminApi("/system").catch(() => null);
  // Signed out while it was asked: the gate shows no notice.
  const missing = report && $("#gate").hidden ? modelsAdvice(report) : null;
  notice.hidden = !missing?.missing.length;
  notice.replaceChildren(...(missing?.missing.length ? adviceParagraphs(missing) : []));
}

function hideModelsNotice() {
  $("#models-notice").hidden = true;
  $("#models-notice").replaceChildren();
}

/** Starts the shell: the session if there is one, else sign-in or setup; calls back on each change. */
export async function startSession({ onSignedIn, onSignedOut }) {
  const signedIn = (session) => {
    if (session.second_factor?.must_enrol) return showEnrolmentGate(session, signedIn);
    showShell(session);
    showModelsNotice();
    onSignedIn(session);
  };
  const signedOut = () => {
    setCsrfToken(null);
    hideModelsNotice();
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
  $("#menu-toggle").addEventListener("click", () => setMenuOpen($("#menu-toggle").getAttribute("aria-expanded") !== "true"));
  // Going to another page closes the menu, as choosing from any menu does.
  addEventListener("hashchange", () => setMenuOpen(false));
  // Any 401 from a page means the session ended (idle, too old, signed out elsewhere).
  addEventListener("parley:unauthorized", () => {
    if ($("#gate").hidden) signedOut();
  });

  const refusal = takeSsoRefusal();
  if (refusal !== null) {
    hideShell();
    return showSsoRefused($("#gate"), refusal);
  }
  try {
    signedIn(await adminApi("/session"));
  } catch (err) {
    if (err?.status !== 401) throw err;
    // The 401 listener above has shown the gate already.
  }
}

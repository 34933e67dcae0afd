// Setting up a second factor (decision 151): a new secret shown once (QR code and text), confirmed
// with a first code, then the recovery codes, shown once too. Used by the Account page and by the
// gate a session must pass when the appliance requires a second factor (PARLEY_REQUIRE_MFA).
import { adminApi, ApiError } from "../api.js";
import { copyButton, h, showFormError } from "../ui.js";

const PATH = "/account/second-factor";

/** The code field of a second-factor form: digits from an app, or a recovery code from paper. */
export function codeField(label) {
  return h("label", {}, label, h("input", { name: "code", autocomplete: "one-time-code", required: true, maxlength: 40, spellcheck: "false" }));
}

/** The recovery codes, once: the server keeps only their hashes. */
function recoveryCodes(codes, onDone) {
  return h(
    "section",
    { class: "secret", "aria-labelledby": "recovery-codes-title" },
    h("h2", { id: "recovery-codes-title" }, "Your recovery codes"),
    h("p", {}, "Keep them somewhere safe, away from your phone: each signs in once in place of a code. They are shown only this once."),
    h(
      "ul",
      { "aria-label": "Recovery codes" },
      codes.map((c) => h("li", {}, h("code", {}, c))),
    ),
    h("div", { class: "actions" }, copyButton(codes.join("\n"), "Copy codes"), h("button", { type: "button", onclick: onDone }, "Done")),
  );
}

/** The new secret and the form that confirms it with a first code. */
function confirmStep(enrolment, shown, onDone) {
  const form = h("form", { class: "stack" }, codeField("Code from your app"), h("div", { class: "actions" }, h("button", { type: "submit" }, "Confirm")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    showFormError(form, null);
    try {
      const { recovery_codes } = await adminApi(`${PATH}/confirmation`, { method: "POST", body: { code: form.elements.code.value } });
      shown.replaceChildren(recoveryCodes(recovery_codes, onDone));
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      showFormError(form, err);
    }
  });
  return h(
    "div",
    { class: "stack" },
    h("p", {}, "Scan this with an authenticator app (such as FreeOTP, Aegis or Google Authenticator), or type the secret into it. Both are shown only now."),
    h("img", { src: enrolment.qr_code, alt: "QR code of the secret", width: 240, height: 240 }),
    h("p", {}, "Secret: ", h("code", { "aria-label": "Secret" }, enrolment.secret)),
    form,
  );
}

/** A section that sets up a second factor; `onDone` runs once the recovery codes were shown and dismissed. */
export function enrolmentSection(onDone) {
  const shown = h("div", { "aria-live": "polite" });
  const start = h("button", { type: "button" }, "Start set-up");
  start.addEventListener("click", async () => {
    start.disabled = true;
    try {
      shown.replaceChildren(confirmStep(await adminApi(`${PATH}/enrolment`, { method: "POST" }), shown, onDone));
      start.hidden = true;
    } catch (err) {
      start.disabled = false;
      shown.replaceChildren(h("p", { class: "error", role: "alert" }, err.message));
    }
  });
  return h(
    "section",
    { class: "card", "aria-labelledby": "enrol-title" },
    h("h2", { id: "enrol-title" }, "Set up a second factor"),
    h("p", {}, "After your password, sign-in will ask for a six-digit code from an app on your phone."),
    h("div", { class: "actions" }, start),
    shown,
  );
}

// Account: the signed-in administrator's own second factor (decision 151): set it up, or remove
// it with a current code. The secret and recovery codes are shown once, at set-up.
import { adminApi, ApiError } from "../api.js";
import { codeField, enrolmentSection } from "../components/second-factor.js";
import { h, showFormError } from "../ui.js";

function removalForm(onRemoved) {
  const form = h(
    "form",
    { class: "card", "aria-labelledby": "remove-factor-title" },
    h("h2", { id: "remove-factor-title" }, "Remove the second factor"),
    h("p", {}, "Give a code from your app (or a recovery code): sign-in then asks for the password only."),
    codeField("Code from your app or a recovery code"),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Remove second factor")),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    showFormError(form, null);
    try {
      await adminApi("/account/second-factor/removal", { method: "POST", body: { code: form.elements.code.value } });
      onRemoved();
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      showFormError(form, err);
    }
  });
  return form;
}

export async function render(view, ctx) {
  const state = await adminApi("/account/second-factor");
  if (ctx.signal.aborted) return;
  const status = state.enrolled
    ? `On: sign-in asks for a code after the password. ${state.recovery_codes_left} recovery code(s) left.`
    : `Off${state.required ? ": this appliance requires one" : ""}.`;
  view.append(
    h("h1", {}, "Account"),
    h("p", {}, "Signed in as ", h("strong", {}, ctx.session.admin.email)),
    h("p", { id: "second-factor-status" }, h("strong", {}, "Second factor: "), status),
    state.enrolled ? removalForm(ctx.refresh) : enrolmentSection(ctx.refresh),
  );
}

import { field, formAlert, showError, textInput } from "../../components/fields.js";
import { confirmDialog, copyButton, h } from "../../ui.js";

/**
 * Bind to an end user (the device token comes back once: shown once, for the person
 * provisioning the wearable) or unbind (the token is revoked). update(device) follows the
 * binding as polling sees it; `names` (names.js) has read the end user's name by then.
 */
export function bindingPanel(ctx, device, names) {
  const body = h("div");
  const token = h("div", { class: "once", hidden: true });
  const el = h("section", { class: "panel", "aria-labelledby": "bind-h" }, h("h2", { id: "bind-h" }, "Binding"), token, body);
  let shown = null;

  function update(d) {
    if (shown === d.status) return; // keep a half-typed end user id while polling
    shown = d.status;
    body.replaceChildren(d.status === "bound" ? unbindForm(d) : bindForm(d));
  }

  function bindForm(d) {
    const form = h(
      "form",
      { class: "row-form", novalidate: "" },
      field("End user id", textInput("end_user_id", ctx.query.get("end_user_id") ?? "", { autocomplete: "off", placeholder: "eu_…" }), {
        param: "end_user_id",
      }),
      h("button", { type: "submit" }, "Bind"),
      formAlert(),
    );
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      try {
        const bound = await ctx.api(`/devices/${d.id}/bind`, { method: "POST", body: { end_user_id: String(new FormData(form).get("end_user_id")).trim() } });
        await names.load([bound.device]);
        showToken(bound.device_token);
        update(bound.device);
      } catch (err) {
        showError(form, err);
      }
    });
    return form;
  }

  function unbindForm(d) {
    const alert = formAlert();
    const button = h("button", { type: "button", class: "danger" }, "Unbind");
    button.addEventListener("click", async () => {
      if (!(await confirmDialog(`Unbind ${d.serial_number}? Its device token stops working; its recordings keep their end user.`, "Unbind"))) return;
      try {
        update(await ctx.api(`/devices/${d.id}/unbind`, { method: "POST" }));
        token.hidden = true;
      } catch (err) {
        alert.textContent = err.message;
      }
    });
    return h("div", {}, h("p", {}, "Bound to ", names.link("end_user_id", d.end_user_id), "."), button, alert);
  }

  function showToken(value) {
    const out = h("input", { type: "text", readonly: "", value, class: "secret" });
    token.replaceChildren(
      h("p", {}, h("strong", {}, "Device token, shown only this once: "), "give it to the device now."),
      field("Device token", out),
      copyButton(value, "Copy device token"),
    );
    token.hidden = false;
  }

  update(device);
  return { el, update };
}

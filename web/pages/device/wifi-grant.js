import { field, formAlert, numberInput, showError, typedNumber } from "../../components/fields.js";
import { h, when } from "../../ui.js";

/**
 * A signed, single-use grant that lets the mobile app hand WiFi credentials to the device
 * over Bluetooth. No password is stored: the grant only authorises.
 */
export function wifiGrantPanel(ctx, device) {
  const out = h("div", { "aria-live": "polite" });
  const form = h(
    "form",
    { class: "row-form", novalidate: "" },
    field("Valid for (seconds)", numberInput("expires_in_seconds", 900), { param: "expires_in_seconds", hint: "60-3600" }),
    h("button", { type: "submit" }, "Create WiFi grant"),
    formAlert(),
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    out.replaceChildren();
    const raw = String(form.elements.expires_in_seconds.value).trim();
    try {
      const grant = await ctx.api(`/devices/${device.id}/wifi-config/grant`, {
        method: "POST",
        body: raw === "" ? {} : { expires_in_seconds: typedNumber(raw) },
      });
      const blob = h("textarea", { readonly: "", rows: "3", class: "secret" }, grant.grant_blob);
      out.replaceChildren(
        field("WiFi grant", blob),
        h("p", { class: "muted" }, `Expires ${when(grant.expires_at)}. Pass it to the device over Bluetooth; it works once.`),
      );
    } catch (err) {
      showError(form, err);
    }
  });
  return h("section", { class: "panel", "aria-labelledby": "wifi-h" }, h("h2", { id: "wifi-h" }, "WiFi grant"), form, out);
}

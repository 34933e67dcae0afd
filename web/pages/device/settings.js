import { checkbox, clearErrors, field, formAlert, numberInput, showError, textInput, typedNumber } from "../../components/fields.js";
import { h } from "../../ui.js";

const C = "settings.connection";
const U = "settings.upload";

/**
 * The settings of spec 2.4 as PATCH /devices/{id} accepts them. The form does not judge
 * values itself (novalidate, numbers sent as typed): the API's validation message is shown
 * beside the field its param names, so the rules live in one place.
 */
export function settingsEditor(ctx, device) {
  const s = device.settings;
  const conn = s.connection;
  const up = s.upload;
  const peak = up.off_peak_hours ?? {};
  const status = h("p", { role: "status", class: "muted" });
  const form = h(
    "form",
    { class: "settings", novalidate: "" },
    h(
      "fieldset",
      {},
      h("legend", {}, "Connections"),
      field("WiFi enabled", checkbox("wifi", conn.enabled_connections.wifi), { param: `${C}.enabled_connections.wifi` }),
      field("Cellular enabled", checkbox("cellular", conn.enabled_connections.cellular), { param: `${C}.enabled_connections.cellular` }),
      field("Heartbeat over WiFi", checkbox("hb_wifi", conn.heartbeat_enabled_connections.wifi), { param: `${C}.heartbeat_enabled_connections.wifi` }),
      field("Heartbeat over cellular", checkbox("hb_cellular", conn.heartbeat_enabled_connections.cellular), {
        param: `${C}.heartbeat_enabled_connections.cellular`,
      }),
      field("Upload network order", textInput("upload_network_preference", conn.upload_network_preference.join(", ")), {
        param: `${C}.upload_network_preference`,
        hint: "wifi, ble and cellular, most preferred first",
      }),
      field("WiFi idle timeout (seconds)", numberInput("wifi_idle", conn.power_management.wifi_idle_timeout_seconds), {
        param: `${C}.power_management.wifi_idle_timeout_seconds`,
        hint: "-1 never, 0 right after work, or 10-2540",
      }),
      field("Cellular idle timeout (seconds)", numberInput("cellular_idle", conn.power_management.cellular_idle_timeout_seconds), {
        param: `${C}.power_management.cellular_idle_timeout_seconds`,
        hint: "-1 never, 0 right after work, or 10-2540",
      }),
    ),
    h(
      "fieldset",
      {},
      h("legend", {}, "Upload"),
      field("Stream while recording", checkbox("streaming_enabled", up.streaming_enabled), { param: `${U}.streaming_enabled` }),
      field("Streaming chunk (KB)", numberInput("streaming_chunk_kb", up.streaming_chunk_kb), { param: `${U}.streaming_chunk_kb`, hint: "64-1024" }),
      field("Daily cellular data limit (MB)", numberInput("daily_data_limit_mb", up.daily_data_limit_mb), {
        param: `${U}.daily_data_limit_mb`,
        hint: "0 means unlimited",
      }),
      field("Allow roaming", checkbox("allow_roaming", up.allow_roaming), { param: `${U}.allow_roaming` }),
      field("Pause on low battery", checkbox("pause_on_low_battery", up.pause_on_low_battery), { param: `${U}.pause_on_low_battery` }),
      field("Off-peak uploads only", checkbox("peak_enabled", peak.enabled), { param: `${U}.off_peak_hours.enabled` }),
      field("Off-peak start", textInput("peak_start", peak.start, { placeholder: "22:00" }), { param: `${U}.off_peak_hours.start`, hint: "HH:MM" }),
      field("Off-peak end", textInput("peak_end", peak.end, { placeholder: "06:00" }), { param: `${U}.off_peak_hours.end`, hint: "HH:MM" }),
      field("Off-peak time zone", textInput("peak_timezone", peak.timezone, { placeholder: "Europe/Paris" }), { param: `${U}.off_peak_hours.timezone` }),
    ),
    h("button", { type: "submit" }, "Save settings"),
    status,
    formAlert(),
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    clearErrors(form);
    status.textContent = "";
    try {
      await ctx.api(`/devices/${device.id}`, { method: "PATCH", body: { settings: settingsFrom(form) } });
      status.textContent = "Settings saved.";
    } catch (err) {
      showError(form, err);
    }
  });
  return h("section", { class: "panel", "aria-labelledby": "settings-h" }, h("h2", { id: "settings-h" }, "Settings"), form);
}

function settingsFrom(form) {
  const el = form.elements;
  const flag = (name) => el[name].checked;
  const optional = (name, key) => (String(el[name].value).trim() === "" ? {} : { [key]: typedNumber(el[name].value) });
  const text = (name, key) => (String(el[name].value).trim() === "" ? {} : { [key]: String(el[name].value).trim() });
  const offPeak = { enabled: flag("peak_enabled"), ...text("peak_start", "start"), ...text("peak_end", "end"), ...text("peak_timezone", "timezone") };
  return {
    connection: {
      enabled_connections: { wifi: flag("wifi"), cellular: flag("cellular") },
      heartbeat_enabled_connections: { wifi: flag("hb_wifi"), cellular: flag("hb_cellular") },
      upload_network_preference: String(el.upload_network_preference.value)
        .split(/[\s,]+/)
        .filter(Boolean),
      power_management: { ...optional("wifi_idle", "wifi_idle_timeout_seconds"), ...optional("cellular_idle", "cellular_idle_timeout_seconds") },
    },
    upload: {
      streaming_enabled: flag("streaming_enabled"),
      ...optional("streaming_chunk_kb", "streaming_chunk_kb"),
      ...optional("daily_data_limit_mb", "daily_data_limit_mb"),
      allow_roaming: flag("allow_roaming"),
      pause_on_low_battery: flag("pause_on_low_battery"),
      off_peak_hours: offPeak,
    },
  };
}

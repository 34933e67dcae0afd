import { endUserSelect } from "../../components/end-user-select.js";
import { field, formAlert, showError, textInput } from "../../components/fields.js";
import { h } from "../../ui.js";

/**
 * Uploads an audio file the way a client of the API does: create the recording, get a
 * pre-signed URL, PUT the bytes, complete. Transcription then starts on its own when the
 * project's auto_transcribe is on. A recording made without an end user is in nobody's
 * library, where search and Ask never look: the form says so while none is chosen.
 */
export async function uploadForm(ctx) {
  const file = h("input", { type: "file", name: "file", accept: "audio/*" });
  const status = h("p", { role: "status", class: "muted" });
  const endUser = await endUserSelect(ctx.api, ctx.query.get("end_user_id") ?? "", "No end user");
  const warning = h(
    "p",
    { class: "warning", id: "no-end-user-warning" },
    "Without an end user this recording belongs to no one's library: search and Ask will never reach it. Choose whose it is.",
  );
  const showWarning = () => (warning.hidden = Boolean(endUser.value));
  endUser.addEventListener("change", showWarning);
  showWarning();
  const form = h(
    "form",
    { class: "stack", novalidate: "" },
    field("Audio file", file),
    field("End user", endUser, { param: "end_user_id" }),
    warning,
    field("Name", textInput("name", ""), { param: "name" }),
    h("button", { type: "submit" }, "Upload"),
    status,
    formAlert(),
  );
  endUser.setAttribute("aria-describedby", `${endUser.getAttribute("aria-describedby")} ${warning.id}`);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const audio = file.files?.[0];
    if (!audio) return showError(form, { message: "Choose an audio file first." });
    const data = new FormData(form);
    // No mime_type: the server keeps the PUT's type when it is an audio type it accepts, and the probe names the format anyway.
    const body = { source: "api_upload", name: String(data.get("name")).trim() || audio.name };
    const endUser = String(data.get("end_user_id")).trim();
    if (endUser) body.end_user_id = endUser;
    try {
      status.textContent = "Creating the recording…";
      const rec = await ctx.api("/recordings", { method: "POST", body });
      const target = await ctx.api(`/recordings/${rec.id}/upload-url`, {
        method: "POST",
        body: { content_type: audio.type || "application/octet-stream", file_size_bytes: audio.size },
      });
      status.textContent = `Uploading ${audio.name}…`;
      await put(ctx.api, target, audio);
      await ctx.api(`/recordings/${rec.id}/upload-complete`, { method: "POST", body: { file_size_bytes: audio.size } });
      ctx.navigate(`#/recordings/${rec.id}`);
    } catch (err) {
      status.textContent = "";
      showError(form, err);
    }
  });
  return h("details", { class: "panel" }, h("summary", {}, "Upload a recording"), form);
}

/**
 * The upload URL names the server's configured public address; the dashboard is served by
 * that same server, so the bytes go to its path on the page's own origin (an address the
 * browser already reaches, and no cross-origin request).
 */
function put(api, target, audio) {
  const url = new URL(target.upload_url, location.href);
  return api(`${url.pathname.replace(/^\/v1/, "")}${url.search}`, { method: "PUT", headers: target.headers, body: audio });
}

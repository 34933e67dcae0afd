// Every file of web/me, embedded as text so `bun build --compile` carries the portal inside
// the executable. One import and one line a file; served at /me/<path>. The portal also
// loads a few of the dashboard's own modules (ui.js, components/) from /dashboard.
import indexHtml from "../../../web/me/index.html" with { type: "text" };
import appJs from "../../../web/me/app.js" with { type: "text" };
import apiJs from "../../../web/me/api.js" with { type: "text" };
import askJs from "../../../web/me/ask.js" with { type: "text" };
import libraryJs from "../../../web/me/library.js" with { type: "text" };
import recordingJs from "../../../web/me/recording.js" with { type: "text" };
import ssoJs from "../../../web/me/sso.js" with { type: "text" };
import swJs from "../../../web/me/sw.js" with { type: "text" };
import meCss from "../../../web/me/me.css" with { type: "text" };
import icon from "../../../web/me/icon.svg" with { type: "text" };
import iconMaskable from "../../../web/me/icon-maskable.svg" with { type: "text" };
import manifest from "../../../web/me/manifest.webmanifest" with { type: "text" };

/** Path under /me/ -> file text; no prototype, so a requested path finds own files only. */
export const PORTAL_ASSETS: Readonly<Record<string, string>> = Object.assign(Object.create(null) as Record<string, string>, {
  "index.html": indexHtml as unknown as string,
  "app.js": appJs,
  "api.js": apiJs,
  "ask.js": askJs,
  "library.js": libraryJs,
  "recording.js": recordingJs,
  "sso.js": ssoJs,
  "sw.js": swJs,
  "me.css": meCss,
  "icon.svg": icon,
  "icon-maskable.svg": iconMaskable,
  "manifest.webmanifest": manifest,
});

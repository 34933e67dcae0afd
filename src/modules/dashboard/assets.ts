// Every file of web/, embedded as text so `bun build --compile` carries the dashboard inside
// the executable. One import and one ASSETS line a file; served at /dashboard/<path>.
import appCss from "../../../web/app.css" with { type: "text" };
import appJs from "../../../web/app.js" with { type: "text" };
import apiJs from "../../../web/api.js" with { type: "text" };
import indexHtml from "../../../web/index.html" with { type: "text" };
import sessionJs from "../../../web/session.js" with { type: "text" };
import uiJs from "../../../web/ui.js" with { type: "text" };
import keysPage from "../../../web/pages/keys.js" with { type: "text" };
import systemPage from "../../../web/pages/system.js" with { type: "text" };

/** Path under /dashboard/ -> file text. bun-types describe HTML imports as bundles; with type "text" it is the file's text. */
export const ASSETS: Record<string, string> = {
  "index.html": indexHtml as unknown as string,
  "app.css": appCss,
  "app.js": appJs,
  "api.js": apiJs,
  "session.js": sessionJs,
  "ui.js": uiJs,
  "pages/keys.js": keysPage,
  "pages/system.js": systemPage,
};

import { Elysia } from "elysia";
// Embedded as text so `bun build --compile` carries the dashboard inside the executable.
import appCss from "../../../web/app.css" with { type: "text" };
import indexHtml from "../../../web/index.html" with { type: "text" };
import appJs from "../../../web/app.js" with { type: "text" };

// The dashboard is a static page that talks to /v1 with the key the user types in; it
// loads nothing from elsewhere, so it works on an air-gapped box.
const SECURITY_HEADERS = {
  "content-security-policy": "default-src 'self'; media-src 'self' blob:; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

function file(body: string, type: string) {
  return () => new Response(body, { headers: { "content-type": type, "cache-control": "no-cache", ...SECURITY_HEADERS } });
}

/** The web dashboard at /dashboard (public files; every action needs an API key). */
export function dashboardRoutes() {
  return new Elysia({ name: "parley.dashboard" })
    .get("/", ({ redirect }) => redirect("/dashboard"))
    // bun-types describe HTML imports as bundles; with type "text" it is the file's text.
    .get("/dashboard", file(indexHtml as unknown as string, "text/html; charset=utf-8"))
    .get("/dashboard/app.js", file(appJs, "text/javascript; charset=utf-8"))
    .get("/dashboard/app.css", file(appCss, "text/css; charset=utf-8"));
}

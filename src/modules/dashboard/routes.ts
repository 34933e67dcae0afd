import { Elysia } from "elysia";
import { ApiError } from "../../http/errors";
import { ASSETS } from "./assets";

// The dashboard loads nothing from elsewhere, so it works on an air-gapped box.
const SECURITY_HEADERS = {
  "content-security-policy": "default-src 'self'; media-src 'self' blob:; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

const TYPES: Record<string, string> = { html: "text/html; charset=utf-8", js: "text/javascript; charset=utf-8", css: "text/css; charset=utf-8" };

function serve(path: string): Response {
  const body = ASSETS[path];
  if (body === undefined) throw new ApiError("not_found", `No dashboard file ${path}.`);
  const type = TYPES[path.slice(path.lastIndexOf(".") + 1)] ?? "application/octet-stream";
  return new Response(body, { headers: { "content-type": type, "cache-control": "no-cache", ...SECURITY_HEADERS } });
}

/** The web dashboard's files at /dashboard (public: what they show needs an administrator's session, decision 094). */
export function dashboardRoutes() {
  return new Elysia({ name: "parley.dashboard" })
    .get("/", ({ redirect }) => redirect("/dashboard"))
    .get("/dashboard", () => serve("index.html"))
    .get("/dashboard/*", ({ params }) => serve(params["*"] || "index.html"));
}

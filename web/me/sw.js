// The portal's service worker (decision 149): it keeps the app's shell (its pages, scripts,
// styles and icons) so the portal opens and installs like an app, and nothing else. Content
// (/v1: recordings, transcripts, audio; /me/api: the session) is never intercepted nor
// cached: the browser fetches it as if there were no worker, so a signed-out or erased
// wearer's content is never left on the phone.
const CACHE = "parley-me-shell-v1";
const SHELL = [
  "/me",
  "/me/me.css",
  "/me/app.js",
  "/me/api.js",
  "/me/library.js",
  "/me/recording.js",
  "/me/ask.js",
  "/me/sso.js",
  "/me/icon.svg",
  "/me/icon-maskable.svg",
  "/me/manifest.webmanifest",
  "/dashboard/ui.js",
  "/dashboard/components/format.js",
  "/dashboard/components/markdown.js",
  "/dashboard/components/transcript-player.js",
  "/dashboard/components/fields.js",
  "/dashboard/pages/recording/corrections.js",
];

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(SHELL))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

/** The shell file a request is for, or null: the sign-in link's page is the app's own page. */
function shellPath(request) {
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return null;
  const path = url.pathname === "/me/invite" || url.pathname === "/me/" ? "/me" : url.pathname;
  return SHELL.includes(path) ? path : null;
}

// Network first, so a new version shows at once; the cached copy only when the box is out of reach.
self.addEventListener("fetch", (event) => {
  const path = shellPath(event.request);
  if (!path) return;
  event.respondWith(
    fetch(event.request)
      .then((response) => {
        if (response.ok) {
          const copy = response.clone();
          event.waitUntil(caches.open(CACHE).then((cache) => cache.put(path, copy)));
        }
        return response;
      })
      .catch(() => caches.match(path).then((cached) => cached ?? Response.error())),
  );
});

// The pages' own stylesheet (pages.css), linked once by the first page that imports this.
// The shell's index.html links only app.css; a <link> in index.html would do the same job.
if (!document.querySelector('link[href="/dashboard/pages.css"]')) {
  document.head.append(Object.assign(document.createElement("link"), { rel: "stylesheet", href: "/dashboard/pages.css" }));
}

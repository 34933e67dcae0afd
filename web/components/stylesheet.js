// The pages' own stylesheets, linked once, in this order, by the first page that imports this.
// The shell's index.html links only its own (app.css, controls.css); <link>s there would do the same job.
for (const name of ["pages.css", "recording.css", "search.css"]) {
  const href = `/dashboard/${name}`;
  if (!document.querySelector(`link[href="${href}"]`)) {
    document.head.append(Object.assign(document.createElement("link"), { rel: "stylesheet", href }));
  }
}

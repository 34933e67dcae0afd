import { setDefaultTimeout } from "bun:test";

// Tests never read the developer's own PARLEY_* environment.
for (const k of Object.keys(process.env)) if (k.startsWith("PARLEY_")) delete process.env[k];

// bunfig.toml's [test] timeout is not applied by this Bun (every test got 5 s, so engine
// tests failed on a busy machine); the preload sets it for every file.
setDefaultTimeout(30_000);

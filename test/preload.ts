import { afterAll, beforeEach } from "bun:test";
import { releaseEndedFiles } from "./support/per-file";

// Tests never read the developer's own PARLEY_* environment.
for (const k of Object.keys(process.env)) if (k.startsWith("PARLEY_")) delete process.env[k];

// A preload's hooks run for every file: this one, before each test, releases what the files
// before it opened; its afterAll, once after the last file.
beforeEach(() => releaseEndedFiles(Bun.main));
afterAll(() => releaseEndedFiles());

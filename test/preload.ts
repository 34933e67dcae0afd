// Tests never read the developer's own PARLEY_* environment.
for (const k of Object.keys(process.env)) if (k.startsWith("PARLEY_")) delete process.env[k];

import { existsSync } from "node:fs";
import { join } from "node:path";
import { NATIVE_WHISPER } from "../../src/engines/whisper-native-build";

/**
 * whisper.cpp's own OpenAI-compatible server (examples/server), built by `npm install` with
 * Parley's addon from the same sources and flags (scripts/native-whisper.ts). A checkout
 * whose build predates it gets it built here, once: the build folder caches it.
 */
export function whisperServerBinary(): string {
  if (existsSync(NATIVE_WHISPER.server)) return NATIVE_WHISPER.server;
  const script = join(import.meta.dir, "..", "..", "scripts", "native-whisper.ts");
  Bun.spawnSync([process.execPath, script], { stdout: "inherit", stderr: "inherit" });
  if (!existsSync(NATIVE_WHISPER.server)) throw new Error(`whisper-server could not be built; see ${NATIVE_WHISPER.log}`);
  return NATIVE_WHISPER.server;
}

/** A port nothing listens on now (the server binds it right after). */
function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const { port } = probe;
  probe.stop(true);
  return port;
}

export type WhisperServer = { url: string; stop(): Promise<void> };

/**
 * Starts whisper-server on `model` with OpenAI's path (`--inference-path /v1/audio/transcriptions`)
 * and language detection (`-l auto`, as OpenAI's API detects when no language is sent); resolves
 * once it answers.
 */
export async function startWhisperServer(model: string, threads = 2, extra: string[] = []): Promise<WhisperServer> {
  const port = freePort();
  const proc = Bun.spawn(
    [
      whisperServerBinary(),
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      "-m",
      model,
      "-t",
      String(threads),
      "-l",
      "auto",
      "--inference-path",
      "/v1/audio/transcriptions",
      ...extra,
    ],
    { stdout: "ignore", stderr: "pipe" },
  );
  const stderr = new Response(proc.stderr).text();
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`whisper-server exited ${proc.exitCode}: ${(await stderr).slice(-500)}`);
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await Bun.sleep(50);
  }
  return {
    url: `${url}/v1`,
    stop: async () => {
      proc.kill();
      await proc.exited;
    },
  };
}

import type { Config } from "../config";
import type { Engines } from "../engines";
import { RemoteEmbedder } from "../engines/remote-embedder";
import { RemoteTranscriber } from "../engines/remote-transcriber";
import type { Check } from "../verdicts";

/** One real call to a remote engine, timed: its model and latency, or the error that names the server and its status. */
async function timedCall(check: string, model: string, url: string, call: () => Promise<string>): Promise<Check> {
  const started = performance.now();
  try {
    const said = await call();
    return { check, ok: true, detail: `${model} at ${url}: answered in ${Math.round(performance.now() - started)} ms (${said})` };
  } catch (err) {
    return { check, ok: false, detail: `${model} at ${url}: ${(err as Error).message}` };
  }
}

/**
 * `parley doctor`'s checks of the engines on OpenAI-compatible servers (decision 188), each
 * with one real call and no retry: a second of silence transcribed, one text embedded, a
 * four-token chat answer. Empty when every engine is local.
 */
export async function remoteEngineChecks(config: Config, engines: Engines): Promise<Check[]> {
  const checks: Check[] = [];
  const { transcriber, embedder, remoteLlm } = engines;
  const remote = config.engines;
  if (transcriber instanceof RemoteTranscriber && remote.transcriber)
    checks.push(await timedCall("transcriber", transcriber.model, remote.transcriber.baseUrl, () => transcriber.probe()));
  if (embedder instanceof RemoteEmbedder && remote.embedder)
    checks.push(await timedCall("embedder", embedder.model, remote.embedder.baseUrl, () => embedder.probe()));
  if (remoteLlm && config.ask.openai.baseUrl) {
    const uses = [
      remote.llm === "openai_compatible" && "summaries",
      config.redactionLlm === "openai_compatible" && "redaction's pass",
      "Ask's openai_compatible provider",
    ].filter(Boolean);
    checks.push(
      await timedCall(`remote llm`, remoteLlm.model, config.ask.openai.baseUrl, async () => {
        const out = await remoteLlm.complete({ messages: [{ role: "user", content: "Say OK." }], maxTokens: 4, temperature: 0, interactive: true });
        return `${out.tokens.output} token(s); used for ${uses.join(", ")}`;
      }),
    );
  }
  return checks;
}

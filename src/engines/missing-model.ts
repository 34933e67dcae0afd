import { importAdvice, installAdvice, isManifestModel } from "../model-files/manifest";
import { runningCli } from "../runtime/cli-name";

/**
 * A model file the work needs is not installed. Jobs record it as a failure whose
 * message names the command that installs it; it never crashes the server.
 */
export class MissingModelError extends Error {
  /** `checked`: where the engine looked, named in the advice for an operator's own model (a manifest model's advice is its pull command). */
  constructor(
    readonly modelName: string,
    kind: string,
    checked: string,
  ) {
    const cli = runningCli();
    const airGapped = isManifestModel(modelName) ? ` (or ${importAdvice(cli)} on an air-gapped machine)` : "";
    super(`The ${kind} model ${modelName} is not installed. Install it: ${installAdvice(modelName, { cli, where: checked })}${airGapped}.`);
  }
}

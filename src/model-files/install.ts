import { copyFileSync, createWriteStream, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { ChecksumError, checkDigest, hashFile, readInstalled, writeInstalled } from "./installed";
import { findModel, type Manifest, type ModelEntry, type ModelFile } from "./manifest";
import { modelState, type ModelStatus, notAsPublished } from "./state";

/** How a model that is not the manifest's is used instead of installed under its name. */
const OWN_MODEL = "; a model of your own is not installed under a published name: set PARLEY_WHISPER_MODEL (or PARLEY_LLM_MODEL) to its file's path instead";

export type Progress = (event: { phase: "download" | "verify" | "copy"; file: string; done: number; total: number | null }) => void;

export type ModelsContext = { modelsDir: string; mirror: string; manifest: Manifest; onProgress?: Progress; now?: () => Date };

export class DownloadError extends Error {}

/**
 * Downloads one file to `part`, resuming a previous partial download with a Range request.
 * A server that ignores Range answers 200 and the download restarts from zero.
 */
async function download(url: string, part: string, file: string, onProgress?: Progress): Promise<void> {
  const have = existsSync(part) ? statSync(part).size : 0;
  const res = await fetch(url, { headers: have ? { range: `bytes=${have}-` } : {} }).catch((err: Error) => {
    throw new DownloadError(`cannot reach ${url}: ${err.message}`);
  });
  if (res.status === 416 && have) return; // the partial file is already complete
  if (!res.ok || !res.body) throw new DownloadError(`GET ${url} answered ${res.status}`);
  const resumed = res.status === 206;
  const length = Number(res.headers.get("content-length") ?? NaN);
  const total = Number.isFinite(length) ? length + (resumed ? have : 0) : null;
  let done = resumed ? have : 0;
  const out = createWriteStream(part, { flags: resumed ? "a" : "w" });
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      if (!out.write(chunk)) await new Promise((r) => out.once("drain", r));
      done += chunk.byteLength;
      onProgress?.({ phase: "download", file, done, total });
    }
  } finally {
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
}

/** Makes the folders a model's files go in; returns those it created, so a refusal can take them away again. */
function makeFolders(ctx: Pick<ModelsContext, "modelsDir">, model: ModelEntry): string[] {
  const created: string[] = [];
  for (const f of model.files) {
    const first = mkdirSync(dirname(join(ctx.modelsDir, f.path)), { recursive: true });
    if (first) created.push(first);
  }
  return created;
}

/** A refused model leaves nothing behind: its staged files and the folders made for them go. */
function discard(ctx: Pick<ModelsContext, "modelsDir">, model: ModelEntry, folders: string[]): void {
  for (const f of model.files) rmSync(`${join(ctx.modelsDir, f.path)}.part`, { force: true });
  // Made by this install for its files alone, and empty once those went; the newest first.
  for (const folder of folders.reverse()) rmSync(folder, { recursive: true, force: true });
}

/**
 * Verifies every staged `.part` file of a model (its checksums, and that a file whose header
 * can be read is the one the manifest publishes: decision 120), then renames them all into
 * place and records their digests. A mismatch deletes the staged files and the folders made
 * for them (`folders`): nothing is installed, nothing is left.
 */
async function commit(ctx: ModelsContext, model: ModelEntry, source: "pull" | "import", folders: string[]): Promise<void> {
  const files: Record<string, { sha256: string; size: number }> = {};
  try {
    for (const f of model.files) {
      const part = `${join(ctx.modelsDir, f.path)}.part`;
      const total = statSync(part).size;
      let done = 0;
      const digest = await hashFile(part, (n) => ctx.onProgress?.({ phase: "verify", file: f.path, done: (done += n), total }));
      checkDigest(f, digest);
      files[f.path] = { sha256: digest.sha256, size: digest.size };
    }
    const wrong = notAsPublished(model, `${join(ctx.modelsDir, model.files[0]!.path)}.part`);
    if (wrong) throw new ChecksumError(`${model.files[0]!.path}: ${wrong}${OWN_MODEL}`);
  } catch (err) {
    discard(ctx, model, folders);
    throw err;
  }
  for (const f of model.files) renameSync(`${join(ctx.modelsDir, f.path)}.part`, join(ctx.modelsDir, f.path));
  const record = readInstalled(ctx.modelsDir);
  record[model.name] = { installed_at: (ctx.now?.() ?? new Date()).toISOString(), source, files };
  writeInstalled(ctx.modelsDir, record);
}

/** `parley models pull NAME`: download from the mirror, verify, install. */
export async function pullModel(ctx: ModelsContext, name: string): Promise<ModelEntry> {
  const model = findModel(ctx.manifest, name);
  if (model.bundled) return model;
  // A download that breaks keeps its folders and `.part` files: the next pull resumes them.
  const folders = makeFolders(ctx, model);
  for (const f of model.files) await download(`${ctx.mirror}/${f.url}`, `${join(ctx.modelsDir, f.path)}.part`, f.path, ctx.onProgress);
  await commit(ctx, model, "pull", folders);
  return model;
}

/** Where a model file sits in an offline bundle: under its models-folder path, or flat by file name. */
function findInBundle(root: string, f: ModelFile): string | null {
  for (const candidate of [join(root, f.path), join(root, basename(f.path))]) if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  return null;
}

/** A model file's name in a bundle: its path inside the model's folder (onnx/model.onnx), else its file name. */
const bundleName = (model: ModelEntry, f: ModelFile): string => (f.path.startsWith(`${model.name}/`) ? f.path.slice(model.name.length + 1) : basename(f.path));

/** The file names import looks for, by model: what a refusal says, so a file can be renamed to what is expected. */
function expectedNames(manifest: Manifest): string {
  const models = manifest.models.filter((m) => !m.bundled && m.files.length);
  return `Import looks for these file names (in the folder, or in a folder named after the model): ${models.map((m) => `${m.files.map((f) => bundleName(m, f)).join(" + ")} (${m.name})`).join(", ")}`;
}

/**
 * `parley models import PATH`: install from a local folder (an air-gapped bundle on a USB
 * stick, laid out like the models folder or flat) or a single file. Every model whose
 * files are all present is copied and verified; one that fails verification is refused
 * (nothing of it installed) without stopping the others.
 */
export async function importModels(ctx: ModelsContext, path: string): Promise<{ installed: string[]; refused: { name: string; reason: string }[] }> {
  if (!existsSync(path)) throw new DownloadError(`${path} does not exist`);
  const isDir = statSync(path).isDirectory();
  const installed: string[] = [];
  const refused: { name: string; reason: string }[] = [];
  /** Models some of whose files are there, for the message when none is whole. */
  const partly: string[] = [];
  for (const model of ctx.manifest.models) {
    if (model.bundled || model.files.length === 0) continue;
    const sources = model.files.map((f) => (isDir ? findInBundle(path, f) : basename(f.path) === basename(path) ? path : null));
    if (sources.some((s) => s === null)) {
      const lacking = model.files.filter((_, i) => sources[i] === null).map((f) => bundleName(model, f));
      if (lacking.length < model.files.length) partly.push(`${model.name} lacks ${lacking.join(", ")}`);
      continue;
    }
    const folders = makeFolders(ctx, model);
    try {
      model.files.forEach((f, i) => {
        ctx.onProgress?.({ phase: "copy", file: f.path, done: 0, total: statSync(sources[i]!).size });
        copyFileSync(sources[i]!, `${join(ctx.modelsDir, f.path)}.part`);
      });
    } catch (err) {
      discard(ctx, model, folders);
      throw err;
    }
    try {
      await commit(ctx, model, "import", folders);
      installed.push(model.name);
    } catch (err) {
      if (!(err instanceof ChecksumError)) throw err;
      refused.push({ name: model.name, reason: err.message });
    }
  }
  if (installed.length === 0 && refused.length === 0) {
    const names = isDir ? readdirSync(path).join(", ") : basename(path);
    const some = partly.length ? `; incomplete: ${partly.join("; ")}` : "";
    throw new DownloadError(`no model of the manifest was found in ${path} (found: ${names || "nothing"})${some}. ${expectedNames(ctx.manifest)}${OWN_MODEL}`);
  }
  return { installed, refused };
}

export type { ModelStatus };

/** A model's status by the one rule of what "installed" means (src/model-files/state.ts). */
export function modelStatus(ctx: Pick<ModelsContext, "modelsDir">, model: ModelEntry): ModelStatus {
  return modelState(ctx.modelsDir, model).status;
}

export type VerifyResult = { name: string; status: "ok" | "unpinned" | "mismatch" | "missing"; detail: string | null };

/** `parley models verify [NAME]`: re-hash installed files against the manifest and the install record. */
export async function verifyModels(ctx: ModelsContext, name?: string): Promise<VerifyResult[]> {
  const record = readInstalled(ctx.modelsDir);
  const models = name ? [findModel(ctx.manifest, name)] : ctx.manifest.models.filter((m) => !m.bundled && modelStatus(ctx, m) !== "missing");
  const results: VerifyResult[] = [];
  for (const model of models) {
    if (model.bundled) {
      results.push({ name: model.name, status: "ok", detail: "bundled with Parley" });
      continue;
    }
    let status: VerifyResult["status"] = "ok";
    let detail: string | null = null;
    for (const f of model.files) {
      const path = join(ctx.modelsDir, f.path);
      if (!existsSync(path)) {
        status = "missing";
        detail = `${f.path} is not installed`;
        break;
      }
      let done = 0;
      const digest = await hashFile(path, (n) => ctx.onProgress?.({ phase: "verify", file: f.path, done: (done += n), total: statSync(path).size }));
      try {
        if (!checkDigest(f, digest, record[model.name]?.files[f.path])) status = "unpinned";
      } catch (err) {
        status = "mismatch";
        detail = (err as Error).message;
        break;
      }
    }
    // The same rule as every other "installed" (decision 120): a file that is not the published model is not it, whatever its checksum.
    const wrong = status === "ok" || status === "unpinned" ? modelState(ctx.modelsDir, model) : null;
    if (wrong?.status === "mismatch") {
      status = "mismatch";
      detail = wrong.detail;
    }
    if (status === "unpinned") detail = "no checksum known: installed without a pull or import that recorded one";
    results.push({ name: model.name, status, detail });
  }
  return results;
}

/** `parley models remove NAME`: delete the files (and any partial download) and the record. */
export function removeModel(ctx: Pick<ModelsContext, "modelsDir" | "manifest">, name: string): ModelEntry {
  const model = findModel(ctx.manifest, name);
  for (const f of model.files) {
    const path = join(ctx.modelsDir, f.path);
    rmSync(path, { force: true });
    rmSync(`${path}.part`, { force: true });
  }
  const record = readInstalled(ctx.modelsDir);
  if (record[name]) {
    delete record[name];
    writeInstalled(ctx.modelsDir, record);
  }
  return model;
}

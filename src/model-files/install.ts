import { copyFileSync, createWriteStream, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { ChecksumError, checkDigest, hashFile, readInstalled, writeInstalled } from "./installed";
import { findModel, type Manifest, type ModelEntry, type ModelFile } from "./manifest";

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

/**
 * Verifies every staged `.part` file of a model, then renames them all into place and
 * records their digests. A mismatch deletes the staged files: nothing is installed.
 */
async function commit(ctx: ModelsContext, model: ModelEntry, source: "pull" | "import"): Promise<void> {
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
  } catch (err) {
    for (const f of model.files) rmSync(`${join(ctx.modelsDir, f.path)}.part`, { force: true });
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
  for (const f of model.files) {
    const dest = join(ctx.modelsDir, f.path);
    mkdirSync(dirname(dest), { recursive: true });
    await download(`${ctx.mirror}/${f.url}`, `${dest}.part`, f.path, ctx.onProgress);
  }
  await commit(ctx, model, "pull");
  return model;
}

/** Where a model file sits in an offline bundle: under its models-folder path, or flat by file name. */
function findInBundle(root: string, f: ModelFile): string | null {
  for (const candidate of [join(root, f.path), join(root, basename(f.path))]) if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  return null;
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
  for (const model of ctx.manifest.models) {
    if (model.bundled || model.files.length === 0) continue;
    const sources = model.files.map((f) => (isDir ? findInBundle(path, f) : basename(f.path) === basename(path) ? path : null));
    if (sources.some((s) => s === null)) continue;
    model.files.forEach((f, i) => {
      const dest = join(ctx.modelsDir, f.path);
      mkdirSync(dirname(dest), { recursive: true });
      ctx.onProgress?.({ phase: "copy", file: f.path, done: 0, total: statSync(sources[i]!).size });
      copyFileSync(sources[i]!, `${dest}.part`);
    });
    try {
      await commit(ctx, model, "import");
      installed.push(model.name);
    } catch (err) {
      if (!(err instanceof ChecksumError)) throw err;
      refused.push({ name: model.name, reason: err.message });
    }
  }
  if (installed.length === 0 && refused.length === 0) {
    const names = isDir ? readdirSync(path).join(", ") : basename(path);
    throw new DownloadError(`no model of the manifest was found in ${path} (found: ${names || "nothing"})`);
  }
  return { installed, refused };
}

export type ModelStatus = "installed" | "missing" | "partial" | "bundled";

export function modelStatus(ctx: Pick<ModelsContext, "modelsDir">, model: ModelEntry): ModelStatus {
  if (model.bundled) return "bundled";
  const present = model.files.filter((f) => existsSync(join(ctx.modelsDir, f.path))).length;
  return present === model.files.length ? "installed" : present === 0 ? "missing" : "partial";
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

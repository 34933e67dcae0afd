import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { type BundledFile, bundledRuntime } from "./bundled";

type Bundle = NonNullable<typeof bundledRuntime>;

function sha256(bytes: Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}

/**
 * The native files of a compiled executable, written out where the system's loader can
 * map them: `$PARLEY_DATA_DIR/runtime/<version>/` (decision 090). A file is written once
 * and checked by hash on the first use in each process; a missing, truncated or altered
 * one is written anew. Writes go to a temporary name and are renamed into place, never
 * rewritten in place: another parley process (the server beside a CLI command) may have
 * the old one mapped. Folders are 0700 and files 0500: the data dir is private
 * (decision 079), and nobody has reason to change a loaded library.
 *
 * From a checkout (`bundle` null) nothing is carried and every lookup answers null: the
 * engines then load from node_modules.
 */
export class RuntimeFiles {
  private readonly checked = new Map<string, string>();

  constructor(
    private readonly dataDir: string,
    private readonly bundle: Bundle | null = bundledRuntime,
  ) {}

  /** Whether this is a compiled executable that carries its native files. */
  get carried(): boolean {
    return this.bundle !== null;
  }

  /**
   * `$PARLEY_DATA_DIR/runtime/<version>` as an absolute path, or null from a checkout: the
   * default data dir is relative (./data), and require() or dlopen take a relative path
   * for a module name, not a file.
   */
  get dir(): string | null {
    return this.bundle ? resolve(this.dataDir, "runtime", this.bundle.version) : null;
  }

  /** Whether the executable carries a file of this name (e.g. `whisper-native/parley_whisper.node`). */
  has(name: string): boolean {
    return Boolean(this.bundle?.files[name]);
  }

  /** The CPU fingerprint Parley's whisper addon was built for, or null when it is not carried. */
  get whisperNativeCpu(): string | null {
    return this.bundle?.whisperNativeCpu ?? null;
  }

  /** The real path of one carried file, written out and checked first; null when it is not carried. */
  file(name: string): string | null {
    const entry = this.bundle?.files[name];
    if (!entry) return null;
    const cached = this.checked.get(name);
    if (cached) return cached;
    const target = join(this.dir!, name);
    if (!existsSync(target) || sha256(readFileSync(target)) !== entry.sha256) write(target, entry);
    this.checked.set(name, target);
    return target;
  }

  /**
   * Writes out every carried file under a folder (e.g. `onnxruntime/`), so libraries that
   * find each other by their folder ($ORIGIN) sit together; the folder's path, or null.
   */
  folder(prefix: string): string | null {
    const names = Object.keys(this.bundle?.files ?? {}).filter((n) => n.startsWith(`${prefix}/`));
    if (names.length === 0) return null;
    for (const name of names) this.file(name);
    return join(this.dir!, prefix);
  }
}

function write(target: string, entry: BundledFile): void {
  const bytes = readFileSync(entry.embedded);
  // The executable itself is corrupt if this differs: say so rather than load it.
  if (sha256(bytes) !== entry.sha256) throw new Error(`the executable's copy of ${target} does not match its hash; rebuild or re-download parley`);
  mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
  const temp = `${target}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, bytes, { mode: 0o500 });
    chmodSync(temp, 0o500); // the umask may have narrowed it further, never wider; be exact
    renameSync(temp, target);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}

import { sha256Hex } from "../../crypto";
import { EXPORT_FORMAT } from "./archive";
import { isSealed, unseal } from "./seal";
import { readZip } from "./zip";

type Manifest = { format?: string; export?: { id?: string }; files?: { path: string; size: number; sha256: string }[] };

/** What checking an archive found: every file present and as listed, or the first problem. */
export type ArchiveVerdict = { ok: true; exportId: string; files: number } | { ok: false; problem: string };

/**
 * Re-checks an export (sealed or not): the manifest names every other file of the archive,
 * and each has the size and SHA-256 it lists. Independent of the server that wrote it.
 */
export function verifyArchive(bytes: Uint8Array, passphrase?: string): ArchiveVerdict {
  let zip = bytes;
  if (isSealed(bytes)) {
    if (!passphrase) return { ok: false, problem: "the archive is encrypted: give its passphrase (--passphrase-file)" };
    try {
      zip = unseal(passphrase, bytes);
    } catch (err) {
      return { ok: false, problem: (err as Error).message };
    }
  }
  let entries: ReturnType<typeof readZip>;
  try {
    entries = readZip(zip);
  } catch (err) {
    return { ok: false, problem: (err as Error).message };
  }
  const byName = new Map(entries.map((e) => [e.name, e.data]));
  const manifestBytes = byName.get("manifest.json");
  if (!manifestBytes) return { ok: false, problem: "manifest.json is missing" };
  let manifest: Manifest;
  try {
    manifest = JSON.parse(new TextDecoder().decode(manifestBytes)) as Manifest;
  } catch {
    return { ok: false, problem: "manifest.json is not valid JSON" };
  }
  if (manifest.format !== EXPORT_FORMAT || !Array.isArray(manifest.files)) return { ok: false, problem: `manifest.json is not a ${EXPORT_FORMAT} manifest` };
  for (const file of manifest.files) {
    const data = byName.get(file.path);
    if (!data) return { ok: false, problem: `${file.path} is listed in the manifest but not in the archive` };
    if (data.length !== file.size) return { ok: false, problem: `${file.path} is ${data.length} bytes; the manifest says ${file.size}` };
    if (sha256Hex(data) !== file.sha256) return { ok: false, problem: `${file.path} does not match its SHA-256 in the manifest` };
  }
  const listed = new Set(manifest.files.map((f) => f.path));
  const extra = entries.find((e) => e.name !== "manifest.json" && !listed.has(e.name));
  if (extra) return { ok: false, problem: `${extra.name} is in the archive but not in the manifest` };
  return { ok: true, exportId: manifest.export?.id ?? "(unnamed)", files: manifest.files.length };
}

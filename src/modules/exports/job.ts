import type { Deps } from "../../deps";
import type { Job } from "../../jobs/queue";
import type { JobContracts } from "../../jobs/contracts";
import { enqueueWalTruncation } from "../../jobs/truncate-wal";
import { archiveEntries } from "./archive";
import { sealStream } from "./seal";
import { BUILD_EXPORT_JOB, exportTenant, passphraseOf } from "./service";
import { completeExport, failExport, findExport } from "./store";
import { type WrittenEntry, zipStream } from "./zip";

/** Hashes and counts what streams through: the archive's own SHA-256 and size, as stored. */
async function* measured(source: AsyncIterable<Uint8Array>, into: { size: number; hash: Bun.CryptoHasher }): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) {
    into.size += chunk.length;
    into.hash.update(chunk);
    yield chunk;
  }
}

/**
 * Builds an export into storage (`<project>/<mode>/<export>/archive`), streaming: audio is
 * never held in memory whole. A failure marks the export failed with its reason; either way
 * the passphrase is then forgotten and the WAL emptied of it.
 */
export function buildExport(deps: Deps) {
  return async (job: Job<JobContracts[typeof BUILD_EXPORT_JOB]>) => {
    const { project_id, mode, export_id } = job.payload;
    const row = findExport(deps.db, { projectId: project_id, mode }, export_id);
    if (!row || row.status !== "processing") return;
    const tenant = exportTenant(row);
    const storageKey = `${project_id}/${mode}/${export_id}/archive`;
    const written: WrittenEntry[] = [];
    const total = { size: 0, hash: new Bun.CryptoHasher("sha256") };
    try {
      const passphrase = passphraseOf(deps.serverSecret, row);
      const zip = zipStream(archiveEntries(deps, tenant, row, written), new Date(row.created_at), (entry) => written.push(entry));
      await deps.storage.write(storageKey, measured(passphrase ? sealStream(passphrase, zip) : zip, total));
      completeExport(deps.db, export_id, { storage_key: storageKey, sha256: total.hash.digest("hex"), size_bytes: total.size }, deps.clock.now().toISOString());
    } catch (err) {
      await deps.storage.remove(storageKey).catch(() => {});
      failExport(deps.db, export_id, { code: "processing_error", message: (err as Error).message }, deps.clock.now().toISOString());
    }
    if (row.encrypted) enqueueWalTruncation(deps.queue);
  };
}

// PARLEY_TLS=auto's key and certificate travel in a backup (decision 104): an appliance restored
// on new hardware presents the certificate its devices already pin.
import { expect, test } from "bun:test";
import { join } from "node:path";
import { buildDeps, closeDeps } from "../../src/boot";
import { loadConfig } from "../../src/config";
import { backupDataDir } from "../../src/data-dir/backup";
import { restoreDataDir } from "../../src/data-dir/restore";
import { ensureAutoCertificate, readAutoCertificate } from "../../src/tls/auto-certificate";
import { makeTempDir } from "../helpers";

test("a backup holds the self-signed key and certificate, and the restored data dir serves the same fingerprint", async () => {
  const root = makeTempDir();
  const config = loadConfig({ PARLEY_DATA_DIR: join(root, "data"), PARLEY_TLS: "auto", PARLEY_LOG_LEVEL: "silent" });
  closeDeps(buildDeps(config)); // a data dir with its database
  const { pair } = ensureAutoCertificate(config.dataDir, { dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"] }, new Date());

  const backup = await backupDataDir(config, join(root, "backup"), () => new Date());
  expect(backup.manifest.files.map((f) => f.path)).toEqual(expect.arrayContaining(["tls/self-signed.key", "tls/self-signed.crt"]));

  const restored = loadConfig({ PARLEY_DATA_DIR: join(root, "restored"), PARLEY_TLS: "auto" });
  await restoreDataDir(restored, backup.path, { force: false, now: () => new Date() });
  const again = readAutoCertificate(restored.dataDir);
  expect(again?.fingerprint256).toBe(pair.fingerprint256);
  // And serve takes it as it is rather than making another.
  expect(ensureAutoCertificate(restored.dataDir, { dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"] }, new Date()).made).toBeNull();
});

import type { Deps } from "../../deps";
import { UsageError } from "../../cli/args";
import { verifyAuditChain } from "./service";

const USAGE = "usage: parley audit verify";

/** `parley audit verify`: exit 1, naming the first bad row, when the hash chain is broken. */
export function auditCommand(deps: Deps, args: string[]): void {
  if (args[0] !== "verify" || args.length > 1) throw new UsageError(USAGE);
  const verdict = verifyAuditChain(deps.db);
  if (verdict.ok) {
    console.log(`audit chain intact: ${verdict.rows} rows, head ${verdict.head}`);
    return;
  }
  console.error(`audit chain broken at row ${verdict.seq} (${verdict.id}): ${verdict.reason}`);
  process.exitCode = 1;
}

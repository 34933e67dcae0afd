import type { Config } from "./config";
import { applianceVolumes } from "./storage";
import { spaceReport } from "./storage/volumes";

/**
 * The one source of verdicts (decision 119): `parley doctor`, the dashboard's System page and
 * GET /v1/health judge each thing with the functions here, and a headline is the worst
 * verdict below it.
 */

/** One verdict; `warning` (said "warn") is worth acting on but fails nothing. */
export type Check = { check: string; ok: boolean; warning?: boolean; detail: string };
export type Verdict = "ok" | "warn" | "fail";

export const verdictOf = (c: Pick<Check, "ok" | "warning">): Verdict => (!c.ok ? "fail" : c.warning ? "warn" : "ok");

const RANK: Record<Verdict, number> = { ok: 0, warn: 1, fail: 2 };
/** The headline over some verdicts: the worst of them (ok when there are none). */
export const worstVerdict = (verdicts: Verdict[]): Verdict => verdicts.reduce<Verdict>((worst, v) => (RANK[v] > RANK[worst] ? v : worst), "ok");

/** A check with its verdict spelled out, as the System page shows it. */
export const withVerdict = <C extends Check>(c: C): C & { verdict: Verdict } => ({ ...c, verdict: verdictOf(c) });

const MB = 1024 * 1024;

/** Free space of each data volume: a volume below PARLEY_MIN_FREE_MB fails (new uploads are refused). */
export function diskChecks(config: Config): Check[] {
  return spaceReport(applianceVolumes(config), config.minFreeBytes).map((v) => {
    const free = `${Math.floor(v.free_bytes / MB)} MB free of ${Math.floor(v.total_bytes / MB)} MB`;
    return {
      check: `disk ${v.volume}`,
      ok: !v.low,
      detail: v.low ? `${free}: below PARLEY_MIN_FREE_MB (${config.minFreeBytes / MB}), new uploads are refused; free space on this volume` : free,
    };
  });
}

export const databaseCheck = (answers: boolean): Check =>
  answers ? { check: "database", ok: true, detail: "answers" } : { check: "database", ok: false, detail: "does not answer: see the server's log" };

/** A configured model's files by the one rule of "installed" (src/model-files/state.ts): only installed or bundled passes. */
export const modelFilesOk = (status: string): boolean => status === "installed" || status === "bundled";

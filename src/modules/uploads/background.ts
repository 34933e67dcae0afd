import type { Deps } from "../../deps";
import type { PeriodicTask } from "../../jobs/scheduler";
import { registerObjectDeletion } from "../recordings/objects";
import { registerUploadVerification } from "./complete";

/** Temp files of interrupted writes older than this are removed (no live write takes a day). */
const PARTIAL_MAX_AGE_MS = 24 * 3600 * 1000;

/** Job handlers and periodic tasks of recordings and uploads, for src/background.ts. */
export function registerRecordingWork(deps: Deps): PeriodicTask[] {
  registerUploadVerification(deps);
  registerObjectDeletion(deps);
  return [
    {
      name: "sweep-partial-uploads",
      pattern: "0 17 * * * *",
      run: async () => void (await deps.storage.sweepPartial(new Date(deps.clock.now().getTime() - PARTIAL_MAX_AGE_MS))),
    },
  ];
}

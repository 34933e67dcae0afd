import type { Deps } from "../../deps";
import { backgroundLlm } from "../../engines";
import type { Tenant } from "../../tenancy";
import { resolveConfig } from "../config/service";
import { findRecording } from "../recordings/service";
import type { Segment } from "../transcriptions/schema";
import { findStoredTranscription } from "../transcriptions/service";
import { summaryMessages, summaryRoom, transcriptLines } from "./generate";
import type { TemplateName } from "./schema";
import { findSummaryByTemplate } from "./store";
import { TEMPLATES } from "./templates";

/**
 * New transcript tokens one warm step evaluates at most (decision 206); fewer where this box's
 * pace would hold the shared cores longer than WARM_STEP_SECONDS (stepTokens).
 */
export const WARM_STEP_TOKENS = 64;
/**
 * About how long one step holds the shared cores: a live pass whose chunk arrives during a step
 * waits for it (a step cannot be cut short without losing what the sequence holds), so steps are
 * short (decision 210). Each step also pays a fixed cost (the model's weights read once more), so
 * not shorter.
 */
export const WARM_STEP_SECONDS = 0.5;
/** The fewest new tokens a step evaluates, whatever the pace. */
const MIN_STEP_TOKENS = 8;

/**
 * The new tokens for the next step: what the last step's pace (tokens evaluated, seconds it
 * took, waiting for the cores included) fits in WARM_STEP_SECONDS. A step's fixed cost makes a
 * small step's pace low, so the size settles where a step takes WARM_STEP_SECONDS.
 */
export function stepTokens(last: { evaluated: number; seconds: number } | null): number {
  if (!last || last.evaluated === 0 || last.seconds <= 0) return MIN_STEP_TOKENS * 2;
  const fits = Math.floor((last.evaluated / last.seconds) * WARM_STEP_SECONDS);
  return Math.max(MIN_STEP_TOKENS, Math.min(WARM_STEP_TOKENS, fits));
}

/** A provisional segment as the live job commits it: its speaker may still be unknown. */
export type ProvisionalSegment = Pick<Segment, "start" | "text"> & { speaker: string | null };

/** How long after its transcription completed a summary that has not started is still waited for. */
const SUMMARY_EXPECTED_MS = 60_000;

type Claim = { tenant: Tenant; transcriptionId: string; template: TemplateName; running: boolean; again: boolean };

/** The last step's size and time, for the next one's (stepTokens): the pace is the box's, whichever stream it was. */
let lastStep: { evaluated: number; seconds: number } | null = null;

/**
 * How a warming waits: `signal` ends it; `yieldTo` is waited for before each step (the live
 * job's: until no live pass runs, so a pass never queues behind more than the step under way).
 */
export type WarmOptions = { signal?: AbortSignal; yieldTo?: () => Promise<void> };

/**
 * The one transcription whose summary prompt is kept warm (decision 206). The model has one
 * context sequence: two streams warming by turns would each evaluate its transcript again
 * and again. The first stream keeps it until its summary has run; the others are summarised cold.
 */
let claim: Claim | null = null;

/**
 * Evaluates a streamed recording's summary prompt, as far as its transcript goes, into the
 * model's context sequence while the recording still streams, so that the summary at
 * completion evaluates only what changed since (decision 206). Called when the live job
 * committed segments; not waited for (the promise is for tests) and never failing: a warm
 * prompt only saves time, and one lost (a restart, another call on the model) only costs it.
 */
export function warmSummaryPrompt(
  deps: Deps,
  tenant: Tenant,
  transcriptionId: string,
  segments: () => ProvisionalSegment[],
  { signal, yieldTo }: WarmOptions = {},
): Promise<void> {
  if (claim && claim.transcriptionId !== transcriptionId && stillNeeded(deps, claim)) return Promise.resolve();
  if (claim?.transcriptionId === transcriptionId && claim.running) {
    claim.again = true;
    return Promise.resolve();
  }
  const template = warmTemplate(deps, tenant, transcriptionId);
  if (!template) return Promise.resolve();
  const mine: Claim = { tenant, transcriptionId, template, running: true, again: false };
  claim = mine;
  return (async () => {
    try {
      // Again while segments came meanwhile, or a step stopped at its bound (each step takes its own turn on the cores).
      for (let more = true; more && !signal?.aborted; ) {
        await yieldTo?.();
        if (signal?.aborted) break;
        mine.again = false;
        more = !(await warmStep(deps, mine, segments(), signal)) || mine.again;
      }
    } catch (err) {
      if (!signal?.aborted) deps.log.debug("summary prompt not warmed", { transcription_id: transcriptionId, error: (err as Error).message });
    } finally {
      mine.running = false;
    }
  })();
}

/** Whether a claim's warm prompt may still be used: its transcription or its summary is still to come. */
function stillNeeded(deps: Deps, held: Claim): boolean {
  const stored = findStoredTranscription(deps.db, held.tenant, held.transcriptionId);
  if (stored?.record.status === "processing") return true;
  if (stored?.record.status !== "completed") return false;
  const summary = findSummaryByTemplate(deps.db, held.tenant, held.transcriptionId, held.template);
  if (summary) return summary.record.status === "processing";
  // Completed without its summary yet: summaries.auto is on its way, unless the configuration changed meanwhile.
  return deps.clock.now().getTime() - Date.parse(stored.record.completed_at ?? "") < SUMMARY_EXPECTED_MS;
}

/** The template the completed transcription will be summarised with (as summaries.auto picks it), or null when none will run or the model cannot be warmed. */
function warmTemplate(deps: Deps, tenant: Tenant, transcriptionId: string): TemplateName | null {
  const stored = findStoredTranscription(deps.db, tenant, transcriptionId);
  if (stored?.record.status !== "processing") return null;
  const recording = findRecording(deps.db, tenant, stored.record.recording_id);
  if (!recording) return null;
  const config = resolveConfig(deps, tenant, { endUserId: recording.end_user_id, deviceId: recording.device_id });
  if (!config.auto_summarize || !Object.hasOwn(TEMPLATES, config.summary_template)) return null;
  const llm = backgroundLlm(deps.engines, deps.config, "summary");
  return llm.prefill && llm.installed() ? config.summary_template : null;
}

/**
 * Speakers as the completed transcription will most likely have them: a segment too short
 * for a provisional speaker takes the one before it. A wrong guess costs only the reuse of
 * the lines after it (the prompt is evaluated again from the first line that differs).
 */
export function likelySpeakers(segments: ProvisionalSegment[]): Pick<Segment, "start" | "text" | "speaker">[] {
  let previous = "SPEAKER_1";
  return segments.map((s) => ({ ...s, speaker: (previous = s.speaker ?? previous) }));
}

/** One bounded step; true when the transcript so far is in (or cannot be warmed). */
async function warmStep(deps: Deps, held: Claim, provisional: ProvisionalSegment[], signal?: AbortSignal): Promise<boolean> {
  if (provisional.length === 0 || findStoredTranscription(deps.db, held.tenant, held.transcriptionId)?.record.status !== "processing") return true;
  const llm = backgroundLlm(deps.engines, deps.config, "summary");
  const template = TEMPLATES[held.template];
  // A newline after the last line: the completed transcript's next line follows it.
  const transcript = `${transcriptLines(likelySpeakers(provisional)).join("\n")}\n`;
  // A transcript past the budget is map-reduced at completion: no one prompt to warm.
  if ((await llm.countTokens(transcript)) > (await summaryRoom(llm, template, provisional.length)).budget) return true;
  const started = performance.now();
  const step = await llm.prefill!(summaryMessages(template.prompt, transcript), { maxNewTokens: stepTokens(lastStep), signal });
  lastStep = { evaluated: step.evaluated, seconds: (performance.now() - started) / 1000 };
  return step.done;
}

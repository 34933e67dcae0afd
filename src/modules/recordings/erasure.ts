import type { Deps } from "../../deps";
import { eraseEventData } from "../../events/outbox";
import type { Tenant } from "../../tenancy";
import { ApiError, errorBody } from "../../http/errors";
import { rewriteStoredResponses } from "../../http/idempotency";
import { enqueueWalTruncation } from "../../jobs/truncate-wal";
import { forgetDeliveryResponses } from "../webhooks/service";

/**
 * The copies of a deleted recording's content outside its own rows (decision 078), erased
 * in the deleting transaction: its earlier events keep ids, statuses and timestamps only
 * (their deliveries still go out with just that, and forget what receivers answered);
 * idempotent replays that named it answer 404; the recordingErased cascade fires, on which
 * Ask's turns that drew on it go (registered by ask: recordings sits below it). The rows
 * themselves go by ON DELETE CASCADE, FTS5 and sqlite-vec drop their entries in place,
 * and secure_delete zeroes what they leave; the job enqueued here then empties the WAL,
 * which still holds page images from before.
 */
export function eraseRecordingCopies(deps: Pick<Deps, "db" | "queue" | "cascades">, tenant: Tenant, recording: { id: string; created_at: string; end_user_id: string | null; device_id: string | null }, now: Date): void {
  const { db, queue } = deps;
  forgetDeliveryResponses(db, eraseEventData(db, tenant, recording.id, recording.created_at));
  const gone = { status: 404, body: errorBody(new ApiError("not_found", `Recording ${recording.id} was deleted.`)) };
  rewriteStoredResponses(db, tenant, recording.id, () => gone);
  deps.cascades.fire("recordingErased", { tenant, recording, now });
  enqueueWalTruncation(queue);
}

import type { Database } from "bun:sqlite";
import { encryptWithServerSecret } from "../../crypto";
import type { Resolver } from "../../dns";
import { DEVICE_EVENT_TYPES, type EventType } from "../../events/outbox";
import { requireUnconfined } from "../../http/access";
import type { Principal } from "../../http/auth";
import { ApiError } from "../../http/errors";
import type { Page } from "../../http/pagination";
import { newId } from "../../ids";
import { getOrganization } from "../projects/service";
import { type CreateWebhookBody, type ListDeliveriesQuery, MAX_URL_LENGTH, type WebhookDelivery, type WebhookEndpoint } from "./schema";
import { clearResponseSnippets } from "./delivery-store";
import { newSigningSecret } from "./signing";
import {
  deleteEndpointRow,
  findDelivery,
  findEndpoint,
  insertEndpoint,
  listDeliveryRows,
  listEndpointRows,
  scheduleDeliveryNow,
  toDelivery,
  toEndpoint,
} from "./store";
import { checkWebhookUrl, type TargetPolicy } from "./url-policy";

type WebhookDeps = { db: Database; serverSecret: string; dns: Resolver; config: { webhooks: TargetPolicy } };

/** Device events go only to enterprise organizations' endpoints that opted in (spec 6; decisions: include_device_events). */
function assertDeviceEventsAllowed(db: Database, principal: Principal, body: CreateWebhookBody): void {
  const namesDeviceEvents = body.events.some((e) => DEVICE_EVENT_TYPES.includes(e as EventType));
  if (namesDeviceEvents && !body.include_device_events) {
    throw new ApiError("forbidden", "Device events (device.low_battery, device.offline) need the opt-in include_device_events: true.", { param: "events" });
  }
  if (body.include_device_events && getOrganization(db, principal.organizationId)?.plan !== "enterprise") {
    throw new ApiError("forbidden", "Device events need the enterprise plan (parley org update --plan enterprise).", { param: "include_device_events" });
  }
}

/** Registers an endpoint; the response carries the signing secret, the only time it is shown. */
export async function createWebhook(
  deps: WebhookDeps,
  principal: Principal,
  body: CreateWebhookBody,
  now: Date,
): Promise<WebhookEndpoint & { secret: string }> {
  requireUnconfined(principal, "manage webhooks");
  const verdict = await checkWebhookUrl(body.url, deps.config.webhooks, { resolve: deps.dns });
  if (verdict) throw new ApiError("validation_error", verdict.message, { param: verdict.param });
  // Stored as URL writes it (lower-case host, default port dropped, dot segments resolved):
  // the form that is checked is the form that is sent to and shown.
  const url = new URL(body.url).href;
  if (url.length > MAX_URL_LENGTH) throw new ApiError("validation_error", `url is longer than ${MAX_URL_LENGTH} characters once normalised.`, { param: "url" });
  assertDeviceEventsAllowed(deps.db, principal, body);
  const secret = newSigningSecret();
  const at = now.toISOString();
  const row = {
    id: newId("wh_", now.getTime()),
    url,
    events: JSON.stringify(body.events.includes("*") ? ["*"] : [...new Set(body.events)]),
    include_device_events: body.include_device_events ? 1 : 0,
    secret_sealed: encryptWithServerSecret(deps.serverSecret, secret),
    failing_since: null,
    disabled_at: null,
    created_at: at,
    updated_at: at,
  };
  insertEndpoint(deps.db, principal, row);
  return { ...toEndpoint({ ...row, project_id: principal.projectId, mode: principal.mode, last_failed_at: null }), secret };
}

function endpointOf(db: Database, principal: Principal, id: string) {
  requireUnconfined(principal, "manage webhooks");
  const row = findEndpoint(db, principal, id);
  if (!row) throw new ApiError("resource_not_found", `No webhook endpoint ${id}.`, { param: "id" });
  return row;
}

export function listWebhooks(db: Database, principal: Principal, page: { limit: number; cursor?: string }): Page<WebhookEndpoint> {
  requireUnconfined(principal, "manage webhooks");
  return listEndpointRows(db, principal, page);
}

export function getWebhook(db: Database, principal: Principal, id: string): WebhookEndpoint {
  return toEndpoint(endpointOf(db, principal, id));
}

/** Removes the endpoint and its deliveries: nothing pending for it is attempted again. */
export function deleteWebhook(db: Database, principal: Principal, id: string): void {
  endpointOf(db, principal, id);
  deleteEndpointRow(db, principal, id);
}

export function listDeliveries(db: Database, principal: Principal, id: string, query: ListDeliveriesQuery): Page<WebhookDelivery> {
  endpointOf(db, principal, id);
  return listDeliveryRows(db, principal, id, query.status, { limit: query.limit, cursor: query.cursor });
}

/** Replays a delivery now (whatever its state); it keeps its evt_ id and its attempt log. */
export function retryDelivery(db: Database, principal: Principal, id: string, deliveryId: string, now: Date): WebhookDelivery {
  endpointOf(db, principal, id);
  return db.transaction(() => {
    if (!findDelivery(db, principal, id, deliveryId))
      throw new ApiError("resource_not_found", `No delivery ${deliveryId} for webhook endpoint ${id}.`, { param: "delivery_id" });
    scheduleDeliveryNow(db, principal, deliveryId, now.toISOString());
    return toDelivery(findDelivery(db, principal, id, deliveryId)!);
  })();
}

/**
 * After events were cut down by an erasure (eraseEventData): their deliveries still go out,
 * with what is left of them, but the attempt logs forget what the receivers answered.
 */
export function forgetDeliveryResponses(db: Database, eventIds: string[]): void {
  clearResponseSnippets(db, eventIds);
}

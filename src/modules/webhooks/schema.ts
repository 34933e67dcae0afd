import { z } from "zod";
import { EVENT_TYPES } from "../../events/outbox";
import { pageQuery } from "../../http/pagination";
import { isoDateTime } from "../../http/schemas";

/** Event types an endpoint may subscribe to: those of spec 6, or "*" for all of them. */
export const subscribableEvent = z.enum([...EVENT_TYPES, "*"]);

export const MAX_URL_LENGTH = 2048;

export const createWebhookBody = z.object({
  url: z.string().min(1).max(MAX_URL_LENGTH),
  events: z
    .array(subscribableEvent)
    .min(1)
    .max(EVENT_TYPES.length + 1),
  include_device_events: z.boolean().optional(),
});
export type CreateWebhookBody = z.infer<typeof createWebhookBody>;

export const listWebhooksQuery = z.object({ ...pageQuery });
export const listDeliveriesQuery = z.object({ ...pageQuery, status: z.enum(["pending", "succeeded", "failed"]).optional() });
export type ListDeliveriesQuery = z.infer<typeof listDeliveriesQuery>;

export const webhookParams = z.object({ id: z.string().min(1).max(100) });
export const deliveryParams = z.object({ id: z.string().min(1).max(100), delivery_id: z.string().min(1).max(100) });

/**
 * Webhook endpoint of spec 2.11 plus what a buyer needs to operate it: the device-event
 * opt-in, and status/disabled_at (an endpoint failing for 3 days is disabled).
 */
export const webhookEndpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    include_device_events: z.boolean(),
    status: z.enum(["enabled", "disabled"]),
    disabled_at: isoDateTime.nullable(),
    failing_since: isoDateTime.nullable(),
    created_at: isoDateTime,
    updated_at: isoDateTime,
  })
  .meta({ id: "WebhookEndpoint" });
export type WebhookEndpoint = z.infer<typeof webhookEndpointSchema>;

/** The creation response: the only one that carries the signing secret (whsec_). */
export const createdWebhookSchema = webhookEndpointSchema.extend({ secret: z.string() }).meta({ id: "CreatedWebhookEndpoint" });

/** One attempt in a delivery's log. */
const deliveryAttemptSchema = z.object({
  attempted_at: isoDateTime,
  latency_ms: z.number().int(),
  response_status: z.number().int().nullable(),
  response_snippet: z.string().nullable(),
  error: z.string().nullable(),
});
export type DeliveryAttempt = z.infer<typeof deliveryAttemptSchema>;

/** A delivery of one event to one endpoint (GET /webhooks/{id}/deliveries). */
export const webhookDeliverySchema = z
  .object({
    id: z.string(),
    webhook_id: z.string(),
    event_id: z.string(),
    event_type: z.string(),
    status: z.enum(["pending", "succeeded", "failed"]),
    attempt_count: z.number().int(),
    next_attempt_at: isoDateTime.nullable(),
    last_attempt: deliveryAttemptSchema.nullable(),
    attempts: z.array(deliveryAttemptSchema),
    completed_at: isoDateTime.nullable(),
    created_at: isoDateTime,
    updated_at: isoDateTime,
  })
  .meta({ id: "WebhookDelivery" });
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;

import { z } from "zod";
import { EVENT_TYPES } from "../../events/outbox";
import { pageQuery } from "../../http/pagination";

/** Event types an endpoint may subscribe to: those of spec 6, or "*" for all of them. */
export const subscribableEvent = z.enum([...EVENT_TYPES, "*"]);

export const MAX_URL_LENGTH = 2048;

export const createWebhookBody = z.object({
  url: z.string().min(1).max(MAX_URL_LENGTH),
  events: z.array(subscribableEvent).min(1).max(EVENT_TYPES.length + 1),
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
 * `secret` is present only in the creation response.
 */
export type WebhookEndpoint = {
  id: string;
  url: string;
  events: string[];
  include_device_events: boolean;
  status: "enabled" | "disabled";
  disabled_at: string | null;
  failing_since: string | null;
  created_at: string;
  updated_at: string;
};

/** One attempt in a delivery's log. */
export type DeliveryAttempt = {
  attempted_at: string;
  latency_ms: number;
  response_status: number | null;
  response_snippet: string | null;
  error: string | null;
};

/** A delivery of one event to one endpoint (GET /webhooks/{id}/deliveries). */
export type WebhookDelivery = {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  status: "pending" | "succeeded" | "failed";
  attempt_count: number;
  next_attempt_at: string | null;
  last_attempt: DeliveryAttempt | null;
  attempts: DeliveryAttempt[];
  completed_at: string | null;
  created_at: string;
  updated_at: string;
};

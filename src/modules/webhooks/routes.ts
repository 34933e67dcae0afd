import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { pageOf } from "../../http/pagination";
import { noContent } from "../../http/schemas";
import {
  createdWebhookSchema,
  createWebhookBody,
  deliveryParams,
  listDeliveriesQuery,
  listWebhooksQuery,
  webhookDeliverySchema,
  webhookEndpointSchema,
  webhookParams,
} from "./schema";
import { createWebhook, deleteWebhook, getWebhook, listDeliveries, listWebhooks, retryDelivery } from "./service";

export function webhooksRoutes(deps: Deps) {
  const { db, clock } = deps;
  return new Elysia({ name: "parley.webhooks", detail: { tags: ["Webhooks"] } })
    .use(authentication(deps))
    .post(
      "/webhooks",
      async ({ principal, body, set }) => {
        const created = await createWebhook(deps, authorize(principal, "webhooks:write"), body, clock.now());
        set.status = 201;
        return created;
      },
      {
        body: createWebhookBody,
        response: { 201: createdWebhookSchema },
        detail: {
          summary: "Create a webhook endpoint",
          description:
            "Scope webhooks:write. HTTPS only; loopback, link-local and cloud metadata hosts are 422 unless the operator allows them (PARLEY_WEBHOOK_ALLOW_HOSTS), LAN hosts too with PARLEY_WEBHOOK_DENY_PRIVATE=1. The secret (whsec_) is returned once. Device events need include_device_events: true and the enterprise plan (403 otherwise).",
        },
      },
    )
    .get("/webhooks", ({ principal, query }) => listWebhooks(db, authorize(principal, "webhooks:read"), query), {
      query: listWebhooksQuery,
      response: { 200: pageOf(webhookEndpointSchema) },
      detail: { summary: "List webhook endpoints", description: "Scope webhooks:read. List envelope, newest first; never includes secrets." },
    })
    .get("/webhooks/:id", ({ principal, params }) => getWebhook(db, authorize(principal, "webhooks:read"), params.id), {
      params: webhookParams,
      response: { 200: webhookEndpointSchema },
      detail: { summary: "Get a webhook endpoint", description: "Scope webhooks:read. status is disabled after 3 days of continuous failure." },
    })
    .delete(
      "/webhooks/:id",
      ({ principal, params, set }) => {
        deleteWebhook(db, authorize(principal, "webhooks:write"), params.id);
        deps.webhooks.cancelEndpoint(params.id);
        set.status = 204;
      },
      {
        params: webhookParams,
        response: noContent,
        detail: { summary: "Delete a webhook endpoint", description: "Scope webhooks:write. Pending deliveries to it stop." },
      },
    )
    .get("/webhooks/:id/deliveries", ({ principal, params, query }) => listDeliveries(db, authorize(principal, "webhooks:read"), params.id, query), {
      params: webhookParams,
      query: listDeliveriesQuery,
      response: { 200: pageOf(webhookDeliverySchema) },
      detail: {
        summary: "List an endpoint's deliveries",
        description: "Scope webhooks:read. Attempts, status, latency, response status and snippet, next attempt.",
      },
    })
    .post(
      "/webhooks/:id/deliveries/:delivery_id/retry",
      ({ principal, params, set }) => {
        const delivery = retryDelivery(db, authorize(principal, "webhooks:write"), params.id, params.delivery_id, clock.now());
        deps.webhooks.kick();
        set.status = 202;
        return delivery;
      },
      {
        params: deliveryParams,
        response: { 202: webhookDeliverySchema },
        detail: { summary: "Retry a delivery now", description: "Scope webhooks:write. 202 with the delivery, due now; same evt_ id." },
      },
    );
}

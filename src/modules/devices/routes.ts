import { Elysia } from "elysia";
import { decryptWithServerSecret, encryptWithServerSecret } from "../../crypto";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { idempotency, type ReplayContext } from "../../http/idempotency";
import { idParam, noContent } from "../../http/schemas";
import {
  bindDeviceBody,
  boundDeviceSchema,
  createDeviceBody,
  deviceSchema,
  deviceSettingsViewSchema,
  deviceStateSchema,
  deviceTokenSchema,
  listDevicesQuery,
  updateDeviceBody,
} from "./schema";
import { pageOf } from "../../http/pagination";
import {
  assertBindTokenLive,
  bindDevice,
  createDevice,
  deleteDevice,
  getDevice,
  getDeviceSettingsView,
  getDeviceState,
  listDevices,
  refreshDeviceToken,
  unbindDevice,
  updateDevice,
} from "./service";

type Bound = ReturnType<typeof bindDevice>;

export function devicesRoutes(deps: Deps) {
  const { db, clock } = deps;
  return new Elysia({ name: "parley.devices", detail: { tags: ["Devices"] } })
    .use(authentication(deps))
    .use(idempotency(deps))
    .post(
      "/devices",
      ({ principal, body, set }) => {
        const caller = authorize(principal, "devices:write");
        set.status = 201;
        return createDevice(db, caller, body, clock.now());
      },
      {
        idempotent: true,
        response: { 201: deviceSchema },
        body: createDeviceBody,
        detail: {
          summary: "Register a device",
          description: "Scope devices:write. Idempotency-Key supported. 409 resource_already_exists on a serial number ever used in this project and mode.",
        },
      },
    )
    .get("/devices", ({ principal, query }) => listDevices(db, authorize(principal, "devices:read"), query), {
      query: listDevicesQuery,
      response: { 200: pageOf(deviceSchema) },
      detail: { summary: "List devices", description: "Scope devices:read. Filters: serial_number (exact), status, end_user_id, model." },
    })
    .get("/devices/:id", ({ principal, params }) => getDevice(db, authorize(principal, "devices:read"), params.id), {
      params: idParam,
      response: { 200: deviceSchema },
      detail: { summary: "Get a device", description: "Scope devices:read. Settings resolved through the configuration hierarchy." },
    })
    .patch("/devices/:id", ({ principal, params, body }) => updateDevice(db, authorize(principal, "devices:write"), params.id, body, clock.now()), {
      params: idParam,
      body: updateDeviceBody,
      response: { 200: deviceSchema },
      detail: { summary: "Update a device", description: "Scope devices:write. firmware_version, metadata, settings (deep merge)." },
    })
    .delete(
      "/devices/:id",
      ({ principal, params, set }) => {
        deleteDevice(deps, authorize(principal, "devices:write"), params.id, clock.now());
        set.status = 204;
      },
      {
        params: idParam,
        response: noContent,
        detail: { summary: "Delete a device", description: "Scope devices:write. Soft delete: the serial number stays reserved; device tokens are revoked." },
      },
    )
    .get("/devices/:id/state", ({ principal, params }) => getDeviceState(deps, authorize(principal, "devices:read"), params.id), {
      params: idParam,
      response: { 200: deviceStateSchema },
      detail: { summary: "Device runtime state", description: "Scope devices:read. Built for polling every 1-10 seconds." },
    })
    .get("/devices/:id/settings", ({ principal, params }) => getDeviceSettingsView(db, authorize(principal, "devices:read"), params.id, clock.now()), {
      params: idParam,
      response: { 200: deviceSettingsViewSchema },
      detail: { summary: "Device settings and current status", description: "Scope devices:read." },
    })
    .post(
      "/devices/:id/bind",
      ({ principal, params, body }) => bindDevice(db, authorize(principal, "devices:write"), params.id, body.end_user_id, clock.now()),
      {
        // The idempotency record keeps the response for 24 h: it holds the token sealed with
        // the server secret, never in clear. A replay unseals it, unless a later unbind or
        // token refresh made it stale: that 409 is today's answer, not a replay (decision 013).
        idempotent: {
          store: (bound: Bound) => ({ ...bound, device_token: encryptWithServerSecret(deps.serverSecret, bound.device_token) }),
          replay: (kept: Bound, { principal, params }: ReplayContext<{ id: string }>) => {
            const deviceToken = decryptWithServerSecret(deps.serverSecret, kept.device_token);
            assertBindTokenLive(db, principal, params.id, deviceToken);
            return { ...kept, device_token: deviceToken };
          },
        },
        params: idParam,
        body: bindDeviceBody,
        response: { 200: boundDeviceSchema },
        detail: {
          summary: "Bind a device to an end user",
          description:
            "Scope devices:write. Idempotency-Key supported. Returns the device token once. 409 resource_conflict when already bound, and for a replay whose token a later unbind or token refresh made stale.",
        },
      },
    )
    .post("/devices/:id/unbind", ({ principal, params }) => unbindDevice(deps, authorize(principal, "devices:write"), params.id, clock.now()), {
      params: idParam,
      response: { 200: deviceSchema },
      detail: { summary: "Unbind a device", description: "Scope devices:write. Revokes the device token. 400 bad_request when not bound." },
    })
    .post(
      "/devices/:id/token/refresh",
      ({ principal, params }) => refreshDeviceToken(deps, authorize(principal, "devices:write", { tokens: ["device"] }), params.id, clock.now()),
      {
        params: idParam,
        response: { 200: deviceTokenSchema },
        detail: { summary: "Rotate the device token", description: "Device token of this device only. The old token stops working." },
      },
    );
}

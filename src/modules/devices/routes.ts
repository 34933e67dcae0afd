import { Elysia } from "elysia";
import { decryptWithServerSecret, encryptWithServerSecret } from "../../crypto";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { idempotent } from "../../http/idempotency";
import { idParam } from "../../http/schemas";
import { bindDeviceBody, createDeviceBody, listDevicesQuery, updateDeviceBody } from "./schema";
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

export function devicesRoutes(deps: Deps) {
  const { db, clock } = deps;
  return new Elysia({ name: "parley.devices", detail: { tags: ["Devices"] } })
    .use(authentication(deps))
    .post(
      "/devices",
      (ctx) =>
        idempotent(deps, ctx, () => {
          const principal = authorize(ctx.principal, "devices:write");
          ctx.set.status = 201;
          return createDevice(db, principal, ctx.body, clock.now());
        }),
      { body: createDeviceBody, detail: { summary: "Register a device", description: "Scope devices:write. Idempotency-Key supported. 409 resource_already_exists on a serial number ever used in this project and mode." } },
    )
    .get("/devices", ({ principal, query }) => listDevices(db, authorize(principal, "devices:read"), query), {
      query: listDevicesQuery,
      detail: { summary: "List devices", description: "Scope devices:read. Filters: serial_number (exact), status, end_user_id, model." },
    })
    .get("/devices/:id", ({ principal, params }) => getDevice(db, authorize(principal, "devices:read"), params.id), {
      params: idParam,
      detail: { summary: "Get a device", description: "Scope devices:read. Settings resolved through the configuration hierarchy." },
    })
    .patch("/devices/:id", ({ principal, params, body }) => updateDevice(db, authorize(principal, "devices:write"), params.id, body, clock.now()), {
      params: idParam,
      body: updateDeviceBody,
      detail: { summary: "Update a device", description: "Scope devices:write. firmware_version, metadata, settings (deep merge)." },
    })
    .delete(
      "/devices/:id",
      ({ principal, params, set }) => {
        deleteDevice(deps, authorize(principal, "devices:write"), params.id, clock.now());
        set.status = 204;
      },
      { params: idParam, detail: { summary: "Delete a device", description: "Scope devices:write. Soft delete: the serial number stays reserved; device tokens are revoked." } },
    )
    .get("/devices/:id/state", ({ principal, params }) => getDeviceState(deps, authorize(principal, "devices:read"), params.id), {
      params: idParam,
      detail: { summary: "Device runtime state", description: "Scope devices:read. Built for polling every 1-10 seconds." },
    })
    .get("/devices/:id/settings", ({ principal, params }) => getDeviceSettingsView(db, authorize(principal, "devices:read"), params.id, clock.now()), {
      params: idParam,
      detail: { summary: "Device settings and current status", description: "Scope devices:read." },
    })
    .post(
      "/devices/:id/bind",
      async (ctx) => {
        // The idempotency record keeps the response for 24 h: it holds the token sealed
        // with the server secret, never in clear, and replays unseal it (decision 013).
        const kept = await idempotent(deps, ctx, () => {
          const bound = bindDevice(db, authorize(ctx.principal, "devices:write"), ctx.params.id, ctx.body.end_user_id, clock.now());
          return { ...bound, device_token: encryptWithServerSecret(deps.serverSecret, bound.device_token) };
        });
        // A replayed 4xx is the stored error body, which has no token.
        if (typeof kept.device_token !== "string") return kept;
        const deviceToken = decryptWithServerSecret(deps.serverSecret, kept.device_token);
        try {
          assertBindTokenLive(db, ctx.principal, ctx.params.id, deviceToken);
        } catch (err) {
          delete ctx.set.headers["idempotent-replayed"]; // the 409 is today's answer, not the stored one
          throw err;
        }
        return { ...kept, device_token: deviceToken };
      },
      { params: idParam, body: bindDeviceBody, detail: { summary: "Bind a device to an end user", description: "Scope devices:write. Idempotency-Key supported. Returns the device token once. 409 resource_conflict when already bound, and for a replay whose token a later unbind or token refresh made stale." } },
    )
    .post("/devices/:id/unbind", ({ principal, params }) => unbindDevice(deps, authorize(principal, "devices:write"), params.id, clock.now()), {
      params: idParam,
      detail: { summary: "Unbind a device", description: "Scope devices:write. Revokes the device token. 400 bad_request when not bound." },
    })
    .post(
      "/devices/:id/token/refresh",
      ({ principal, params }) => refreshDeviceToken(deps, authorize(principal, "devices:write", { tokens: ["device"] }), params.id, clock.now()),
      { params: idParam, detail: { summary: "Rotate the device token", description: "Device token of this device only. The old token stops working." } },
    );
}

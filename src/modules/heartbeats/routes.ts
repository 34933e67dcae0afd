import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authentication } from "../../http/auth";
import { idParam } from "../../http/schemas";
import { heartbeatBody, heartbeatResponseSchema } from "./schema";
import { recordHeartbeat } from "./service";

export function heartbeatsRoutes(deps: Deps) {
  return new Elysia({ name: "parley.heartbeats", detail: { tags: ["Devices"] } })
    .use(authentication(deps))
    .post("/devices/:id/heartbeat", ({ principal, params, body }) => recordHeartbeat(deps, principal, params.id, body, deps.clock.now()), {
      params: idParam,
      body: heartbeatBody,
      response: { 200: heartbeatResponseSchema },
      detail: {
        summary: "Device heartbeat",
        description:
          "Device token of this device only. Records battery, storage, signal, firmware and recording_state; applies command_results and ota_status; returns {commands, ota, server_time} with pending commands now delivered.",
      },
    });
}

import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authentication, authorize, type Principal } from "../../http/auth";
import { idParam } from "../../http/schemas";
import { configBody, configLevelViewSchema } from "./schema";
import { authorizeConfigTarget, type ConfigTarget, readConfigLevel, toOverrides, writeConfigLevel } from "./service";

/** GET/PUT/DELETE for the project, end-user and device levels; GET only for the organization (written by `parley config set`). */
export function configRoutes(deps: Deps) {
  const { clock } = deps;
  const read = (principal: Principal, target: ConfigTarget) => {
    const p = authorize(principal, "config:read");
    authorizeConfigTarget(deps, p, target, false);
    return readConfigLevel(deps, p, target);
  };
  const write = (principal: Principal, target: ConfigTarget, body: Parameters<typeof toOverrides>[0] | null) => {
    const p = authorize(principal, "config:write");
    authorizeConfigTarget(deps, p, target, true);
    return writeConfigLevel(deps, p, target, body && toOverrides(body), clock.now(), p);
  };
  const response = { 200: configLevelViewSchema };
  return new Elysia({ name: "parley.config", detail: { tags: ["Configuration"] } })
    .use(authentication(deps))
    .get("/config/organization", ({ principal }) => read(principal, { level: "organization" }), {
      response,
      detail: { summary: "Organization configuration", description: "Scope config:read. Written with `parley config set --level organization`." },
    })
    .get("/config/project", ({ principal }) => read(principal, { level: "project" }), {
      response,
      detail: { summary: "Project configuration", description: "Scope config:read. The key's project and mode." },
    })
    .put("/config/project", ({ principal, body }) => write(principal, { level: "project" }, body), {
      body: configBody,
      response,
      detail: { summary: "Replace the project configuration", description: "Scope config:write. Absent or null keys inherit." },
    })
    .delete("/config/project", ({ principal }) => write(principal, { level: "project" }, null), {
      response,
      detail: { summary: "Clear the project configuration", description: "Scope config:write." },
    })
    .get("/config/end-users/:id", ({ principal, params }) => read(principal, { level: "end_user", id: params.id }), {
      params: idParam,
      response,
      detail: { summary: "End-user configuration", description: "Scope config:read." },
    })
    .put("/config/end-users/:id", ({ principal, params, body }) => write(principal, { level: "end_user", id: params.id }, body), {
      params: idParam,
      body: configBody,
      response,
      detail: { summary: "Replace an end user's configuration", description: "Scope config:write. Absent or null keys inherit." },
    })
    .delete("/config/end-users/:id", ({ principal, params }) => write(principal, { level: "end_user", id: params.id }, null), {
      params: idParam,
      response,
      detail: { summary: "Clear an end user's configuration", description: "Scope config:write." },
    })
    .get("/config/devices/:id", ({ principal, params }) => read(principal, { level: "device", id: params.id }), {
      params: idParam,
      response,
      detail: { summary: "Device configuration", description: "Scope config:read." },
    })
    .put("/config/devices/:id", ({ principal, params, body }) => write(principal, { level: "device", id: params.id }, body), {
      params: idParam,
      body: configBody,
      response,
      detail: {
        summary: "Replace a device's configuration",
        description: "Scope config:write. Absent or null keys inherit; settings are the device's own overrides (as PATCH /devices writes).",
      },
    })
    .delete("/config/devices/:id", ({ principal, params }) => write(principal, { level: "device", id: params.id }, null), {
      params: idParam,
      response,
      detail: { summary: "Clear a device's configuration", description: "Scope config:write." },
    });
}

import { Elysia } from "elysia";
import { z } from "zod";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { pageQuery } from "../../http/pagination";
import { idParam } from "../../http/schemas";
import { DEVICE_MODELS, strictBody } from "../devices/schema";
import { assignOta, cancelOta, firmwareDownload, getOta, listOta } from "./ota";
import { getPublishedRelease, listReleases } from "./releases";

const otaParams = z.object({ id: z.string().min(1).max(100), ota_id: z.string().min(1).max(100) });

export function firmwareRoutes(deps: Deps) {
  const { db, clock } = deps;
  return new Elysia({ name: "parley.firmware", detail: { tags: ["Firmware and OTA"] } })
    .use(authentication(deps))
    .get(
      "/firmware-releases",
      ({ principal, query }) => listReleases(db, authorize(principal, "firmware:read").organizationId, { model: query.model, publishedOnly: true }, query),
      {
        query: z.object({ ...pageQuery, model: z.enum(DEVICE_MODELS).optional() }),
        detail: { summary: "List published firmware releases", description: "Scope firmware:read. The organization's published releases, newest first. Releases are added with `parley firmware add`." },
      },
    )
    .get("/firmware-releases/:id", ({ principal, params }) => getPublishedRelease(db, authorize(principal, "firmware:read").organizationId, params.id), {
      params: idParam,
      detail: { summary: "Get a published firmware release", description: "Scope firmware:read. 404 not_found for unknown or unpublished." },
    })
    .post(
      "/devices/:id/ota",
      ({ principal, params, body, set }) => {
        const assignment = assignOta(db, authorize(principal, "devices:write"), params.id, body.firmware_release_id, clock.now());
        set.status = 201;
        return assignment;
      },
      {
        params: idParam,
        body: strictBody({ firmware_release_id: z.string().min(1).max(100) }),
        detail: {
          summary: "Assign firmware over the air",
          description: "Scope devices:write. 201 pending assignment. 404 not_found (FirmwareRelease not found) for an unknown or unpublished release; 409 resource_conflict while one is in flight.",
        },
      },
    )
    .get("/devices/:id/ota", ({ principal, params, query }) => listOta(db, authorize(principal, "devices:read"), params.id, query), {
      params: idParam,
      query: z.object(pageQuery),
      detail: { summary: "List a device's OTA assignments", description: "Scope devices:read. Newest first." },
    })
    .get("/devices/:id/ota/:ota_id", ({ principal, params }) => getOta(db, authorize(principal, "devices:read"), params.id, params.ota_id), {
      params: otaParams,
      detail: { summary: "Get an OTA assignment", description: "Scope devices:read." },
    })
    .post("/devices/:id/ota/:ota_id/cancel", ({ principal, params }) => cancelOta(db, authorize(principal, "devices:write"), params.id, params.ota_id, clock.now()), {
      params: otaParams,
      detail: { summary: "Cancel an OTA assignment", description: "Scope devices:write. Pending or delivered only; 409 resource_conflict otherwise." },
    })
    .get(
      "/devices/:id/ota/:ota_id/firmware",
      ({ principal, params, set }) => {
        const file = firmwareDownload(deps, principal, params.id, params.ota_id);
        set.headers["content-type"] = "application/octet-stream";
        set.headers["x-firmware-sha256"] = file.sha256;
        set.headers["x-firmware-version"] = file.version;
        return Bun.file(file.path);
      },
      { params: otaParams, detail: { summary: "Download assigned firmware", description: "Device token of this device only, while the assignment is in flight. Header X-Firmware-SHA256. 404 not_found when the assignment is not in flight or the release's image is missing on the server." } },
    );
}

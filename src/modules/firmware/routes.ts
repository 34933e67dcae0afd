import { Elysia } from "elysia";
import { z } from "zod";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { downloadHeaders } from "../../http/downloads";
import { idempotency } from "../../http/idempotency";
import { pageOf, pageQuery } from "../../http/pagination";
import { binaryRequestBody, binaryResponse, headerParameters, idParam } from "../../http/schemas";
import { DEVICE_MODELS } from "../devices/schema";
import { assignOta, cancelOta, firmwareDownload, getOta, listOta } from "./ota";
import { firmwareReleaseSchema, otaAssignmentSchema } from "./schema";
import { authorizeReleaseWriter, getPublishedRelease, listReleases, publishRelease, uploadFirmware } from "./releases";

const otaParams = z.object({ id: z.string().min(1).max(100), ota_id: z.string().min(1).max(100) });

/** What a firmware download sends: the image's own checks, and the ranges Bun serves a file with. */
const FIRMWARE_HEADERS = ["X-Firmware-SHA256", "X-Firmware-Version", "Content-Disposition", "Accept-Ranges", "Content-Range"];

export function firmwareRoutes(deps: Deps) {
  const { db, clock } = deps;
  return new Elysia({ name: "parley.firmware", detail: { tags: ["Firmware and OTA"] } })
    .use(authentication(deps))
    .get(
      "/firmware-releases",
      ({ principal, query }) => listReleases(db, authorize(principal, "firmware:read").organizationId, { model: query.model, publishedOnly: true }, query),
      {
        query: z.object({ ...pageQuery, model: z.enum(DEVICE_MODELS).optional() }),
        response: { 200: pageOf(firmwareReleaseSchema) },
        detail: {
          summary: "List published firmware releases",
          description:
            "Scope firmware:read. The organization's published releases, newest first. Releases are added with `parley firmware add` or POST /firmware-releases.",
        },
      },
    )
    .post(
      "/firmware-releases/:id/publish",
      ({ principal, params }) => publishRelease(db, authorizeReleaseWriter(principal).organizationId, params.id, clock.now()),
      {
        params: idParam,
        response: { 200: firmwareReleaseSchema },
        detail: {
          summary: "Publish a firmware release",
          description:
            "Live secret key only. Makes a draft assignable and listed; publishing again is a no-op. 404 not_found for a release of another organization or unknown.",
        },
      },
    )
    .get("/firmware-releases/:id", ({ principal, params }) => getPublishedRelease(db, authorize(principal, "firmware:read").organizationId, params.id), {
      params: idParam,
      response: { 200: firmwareReleaseSchema },
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
        body: z.strictObject({ firmware_release_id: z.string().min(1).max(100) }),
        response: { 201: otaAssignmentSchema },
        detail: {
          summary: "Assign firmware over the air",
          description:
            "Scope devices:write. 201 pending assignment. 404 not_found (FirmwareRelease not found) for an unknown or unpublished release; 409 resource_conflict while one is in flight.",
        },
      },
    )
    .get("/devices/:id/ota", ({ principal, params, query }) => listOta(db, authorize(principal, "devices:read"), params.id, query), {
      params: idParam,
      query: z.object(pageQuery),
      response: { 200: pageOf(otaAssignmentSchema) },
      detail: { summary: "List a device's OTA assignments", description: "Scope devices:read. Newest first." },
    })
    .get("/devices/:id/ota/:ota_id", ({ principal, params }) => getOta(db, authorize(principal, "devices:read"), params.id, params.ota_id), {
      params: otaParams,
      response: { 200: otaAssignmentSchema },
      detail: { summary: "Get an OTA assignment", description: "Scope devices:read." },
    })
    .post(
      "/devices/:id/ota/:ota_id/cancel",
      ({ principal, params }) => cancelOta(db, authorize(principal, "devices:write"), params.id, params.ota_id, clock.now()),
      {
        params: otaParams,
        response: { 200: otaAssignmentSchema },
        detail: { summary: "Cancel an OTA assignment", description: "Scope devices:write. Pending or delivered only; 409 resource_conflict otherwise." },
      },
    )
    .get(
      "/devices/:id/ota/:ota_id/firmware",
      ({ principal, params, set }) => {
        const file = firmwareDownload(deps, principal, params.id, params.ota_id);
        Object.assign(set.headers, downloadHeaders("application/octet-stream", `firmware-${file.version}.bin`));
        set.headers["x-firmware-sha256"] = file.sha256;
        set.headers["x-firmware-version"] = file.version;
        return Bun.file(file.path);
      },
      {
        params: otaParams,
        detail: {
          summary: "Download assigned firmware",
          description:
            "Device token of this device only, while the assignment is in flight. application/octet-stream as an attachment (nosniff, CSP sandbox). Header X-Firmware-SHA256. A Range resumes a broken download (206). 404 not_found when the assignment is not in flight or the release's image is missing on the server.",
          ...headerParameters(["Range"]),
          responses: {
            200: binaryResponse("The firmware image", undefined, FIRMWARE_HEADERS),
            206: binaryResponse("The requested byte range of it", undefined, FIRMWARE_HEADERS),
          },
        },
      },
    );
}

/**
 * POST /v1/firmware-releases: the raw request body is the image, streamed to disk. It must
 * be mounted before the JSON body parser (as the upload target is): Elysia runs a global
 * parse hook ahead of any route's own, and ours refuses what is not JSON. The handler never
 * names `body`. The query is the payload an Idempotency-Key replay compares, and
 * (organization, model, version) is unique anyway.
 */
export function firmwareUploadRoutes(deps: Deps) {
  const { db, clock } = deps;
  return new Elysia({ name: "parley.firmware-upload", detail: { tags: ["Firmware and OTA"] } })
    .use(authentication(deps))
    .use(idempotency(deps))
    .post(
      "/v1/firmware-releases",
      async ({ principal, query, request, set }) => {
        const writer = authorizeReleaseWriter(principal);
        const release = await uploadFirmware(db, deps.config.dataDir, { organizationId: writer.organizationId, ...query }, request.body, clock.now());
        set.status = 201;
        return release;
      },
      {
        // The body is the image stream: the query is the payload a retry must repeat.
        idempotent: { payload: "query" },
        query: z.object({ version: z.string().min(1).max(32), model: z.enum(DEVICE_MODELS), notes: z.string().max(2000).optional() }),
        response: { 201: firmwareReleaseSchema },
        detail: {
          requestBody: binaryRequestBody("The firmware image, at most 64 MiB"),
          summary: "Upload a firmware release",
          description:
            "Live secret key (sk_live_) only, not end-user-scoped. The raw request body is the image (Content-Type: application/octet-stream), at most 64 MiB; version, model and notes are query parameters. 201 draft FirmwareRelease with its sha256. 409 resource_already_exists for a version already registered for the model; 413 payload_too_large; 422 for an empty body. Idempotency-Key supported.",
        },
      },
    );
}

import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import type { ErrorBody } from "../../http/errors";
import { idempotent } from "../../http/idempotency";
import { pageOf } from "../../http/pagination";
import { idParam } from "../../http/schemas";
import { commandParams, commandSchema, createCommandBody, listCommandsQuery, resetCompletionBody } from "./schema";
import { cancelCommand, completeReset, createCommand, createResetCommand, getCommand, listCommands } from "./service";

/**
 * A replayed Idempotency-Key whose first request got a 4xx yields the stored error body
 * (idempotent() has already set its status): it goes back unchanged (spec 7), not looked up.
 */
function isReplayedError(kept: unknown): kept is ErrorBody {
  return typeof kept === "object" && kept !== null && "error" in kept;
}

/** Elysia types a handler by its success schemas; a replayed error leaves under its own 4xx status, which none of them covers. */
const asReplayed = (body: ErrorBody) => body as never;

export function commandsRoutes(deps: Deps) {
  const { clock } = deps;
  return new Elysia({ name: "parley.commands", detail: { tags: ["Device commands"] } })
    .use(authentication(deps))
    .post(
      "/devices/:id/commands",
      async (ctx) => {
        const principal = authorize(ctx.principal, "devices:write");
        const kept = await idempotent(deps, ctx, () => {
          const { command, replayed } = createCommand(deps, principal, ctx.params.id, ctx.body, clock.now());
          ctx.set.status = replayed ? 200 : 201;
          if (replayed) ctx.set.headers["idempotent-replayed"] = "true";
          return { id: command.id };
        });
        // The Idempotency-Key record keeps only the id: a grant_token is never persisted (spec 2.6).
        return isReplayedError(kept) ? asReplayed(kept) : getCommand(deps, principal, ctx.params.id, kept.id);
      },
      {
        params: idParam,
        body: createCommandBody,
        response: { 200: commandSchema, 201: commandSchema },
        detail: {
          summary: "Send a command to a device",
          description:
            "Scope devices:write. Idempotency-Key supported. 201 with the pending command (200 with the earlier one for a repeated idempotency_key). 409 invalid_request when the device is unbound or its last heartbeat is 60 s old or more; 409 resource_already_exists for start while recording / stop while not; 404 resource_not_found; 422 for factory_reset.",
        },
      },
    )
    .get("/devices/:id/commands", ({ principal, params, query }) => listCommands(deps, authorize(principal, "devices:read"), params.id, query), {
      params: idParam,
      query: listCommandsQuery,
      response: { 200: pageOf(commandSchema) },
      detail: { summary: "List a device's commands", description: "Scope devices:read. Newest first; filter by status." },
    })
    .get("/devices/:id/commands/:cmd_id", ({ principal, params }) => getCommand(deps, authorize(principal, "devices:read"), params.id, params.cmd_id), {
      params: commandParams,
      response: { 200: commandSchema },
      detail: { summary: "Get a command", description: "Scope devices:read. Read-only restricted keys see grant_token null on factory_reset." },
    })
    .post(
      "/devices/:id/commands/:cmd_id/cancel",
      ({ principal, params }) => cancelCommand(deps, authorize(principal, "devices:write"), params.id, params.cmd_id, clock.now()),
      { params: commandParams, response: { 200: commandSchema }, detail: { summary: "Cancel a command", description: "Scope devices:write. Pending or delivered only; 409 resource_conflict otherwise." } },
    )
    .post(
      "/devices/:id/reset",
      async (ctx) => {
        const principal = authorize(ctx.principal, "devices:write");
        const kept = await idempotent(deps, ctx, () => {
          ctx.set.status = 201;
          return { id: createResetCommand(deps, principal, ctx.params.id, clock.now()).id };
        });
        return isReplayedError(kept) ? asReplayed(kept) : getCommand(deps, principal, ctx.params.id, kept.id);
      },
      {
        params: idParam,
        response: { 201: commandSchema },
        detail: {
          summary: "Factory-reset a device",
          description:
            "Scope devices:write. No body; Idempotency-Key supported. 201 with a factory_reset command whose grant_token is its rct_ completion credential. 409 invalid_request when unbound; 409 resource_conflict when a reset is already in flight.",
        },
      },
    )
    .post(
      "/devices/:id/commands/:cmd_id/complete",
      ({ principal, params, body }) => completeReset(deps, principal, params.id, params.cmd_id, body, clock.now()),
      {
        params: commandParams,
        body: resetCompletionBody,
        response: { 200: commandSchema },
        detail: {
          summary: "Acknowledge a factory reset",
          description: "Only the command's rct_ credential, once. An executed reset unbinds the device. 403 for any other credential; 409 resource_conflict when already acknowledged or no longer open.",
        },
      },
    );
}

import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { idempotency, type IdempotentOptions, type ReplayContext } from "../../http/idempotency";
import { idParam } from "../../http/schemas";
import { type Command, commandParams, commandSchema, createCommandBody, listCommandsQuery, resetCompletionBody } from "./schema";
import type { ErrorBody } from "../../http/errors";
import { pageOf } from "../../http/pagination";
import { cancelCommand, completeReset, createCommand, createResetCommand, getCommand, listCommands } from "./service";

/**
 * The Idempotency-Key record of a created command keeps only its id: a grant_token is never
 * persisted (spec 2.6), so a replay presents the command afresh.
 */
function keepCommandId(deps: Deps): IdempotentOptions {
  return {
    store: (command: Command) => ({ id: command.id }),
    replay: (kept: { id: string }, { principal, params }: ReplayContext<{ id: string }>) =>
      getCommand(deps, authorize(principal, "devices:write"), params.id, kept.id),
  };
}

/** Elysia types a handler by its success schemas; a replayed error leaves under its own 4xx status, which none of them covers. */
const asReplayed = (body: ErrorBody) => body as never;

export function commandsRoutes(deps: Deps) {
  const { clock } = deps;
  return new Elysia({ name: "parley.commands", detail: { tags: ["Device commands"] } })
    .use(authentication(deps))
    .use(idempotency(deps))
    .post(
      "/devices/:id/commands",
      ({ principal, params, body, set }) => {
        const { command, replayed } = createCommand(deps, authorize(principal, "devices:write"), params.id, body, clock.now());
        set.status = replayed ? 200 : 201;
        if (replayed) set.headers["idempotent-replayed"] = "true";
        return command;
      },
      {
        idempotent: keepCommandId(deps),
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
      {
        params: commandParams,
        response: { 200: commandSchema },
        detail: { summary: "Cancel a command", description: "Scope devices:write. Pending or delivered only; 409 resource_conflict otherwise." },
      },
    )
    .post(
      "/devices/:id/reset",
      ({ principal, params, set }) => {
        const command = createResetCommand(deps, authorize(principal, "devices:write"), params.id, clock.now());
        set.status = 201;
        return command;
      },
      {
        idempotent: keepCommandId(deps),
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
          description:
            "Only the command's rct_ credential, once. An executed reset unbinds the device. 403 for any other credential; 409 resource_conflict when already acknowledged or no longer open.",
        },
      },
    );
}

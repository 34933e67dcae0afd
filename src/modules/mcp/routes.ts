import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { Elysia } from "elysia";
import { z } from "zod";
import type { Deps } from "../../deps";
import { authentication, type Principal } from "../../http/auth";
import { confineToEndUser, isApiKey } from "../../http/access";
import { ApiError } from "../../http/errors";
import { loadEndUser } from "../end-users/service";
import { buildMcpServer } from "./server";

/** The path assistants are configured with (decisions.md: "an MCP server (Streamable HTTP) at /mcp"). */
export const MCP_PATH = "/mcp";

const mcpQuery = z.object({ end_user_id: z.string().min(1).max(100).optional() });

/**
 * The Principal the tools act as: an API key confined to one end user. An end-user-scoped
 * key is its own end user; any other key names one in `?end_user_id=` (decision 166), which
 * must exist in its project and mode. Device, upload and reset tokens reach no content.
 */
export function assistantPrincipal(deps: Pick<Deps, "db">, principal: Principal, endUserId: string | undefined): Principal {
  if (!isApiKey(principal)) throw new ApiError("forbidden", `A ${principal.kind} token cannot use the MCP server.`);
  const confined = confineToEndUser(principal, endUserId);
  if (!confined) {
    throw new ApiError("validation_error", "Name the end user the assistant acts for: /mcp?end_user_id=eu_..., or use an end-user-scoped key.", {
      param: "end_user_id",
    });
  }
  const endUser = loadEndUser(deps.db, principal, confined, { code: "resource_not_found", param: "end_user_id" });
  return { ...principal, endUserId: endUser.id };
}

/**
 * POST /mcp: the Streamable HTTP transport, stateless and answering in JSON (no server-sent
 * stream: every tool answers at once). Mounted after the global hooks, so the Host check,
 * rate limits, request id and JSON body limits are the API's; authentication is the API's.
 * GET (a stream the server would push on) and DELETE (ending a session) have nothing to
 * offer a stateless server: 405, as the protocol lets a server answer.
 */
export function mcpRoutes(deps: Deps) {
  const notOffered = () => new Response(null, { status: 405, headers: { allow: "POST" } });
  return new Elysia({ name: "parley.mcp" })
    .use(authentication(deps))
    .post(
      MCP_PATH,
      async ({ principal, query, body, request }) => {
        const server = buildMcpServer(deps, assistantPrincipal(deps, principal, query.end_user_id));
        const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        await server.connect(transport);
        try {
          return await transport.handleRequest(request, { parsedBody: body });
        } finally {
          await server.close();
        }
      },
      { query: mcpQuery },
    )
    .get(MCP_PATH, notOffered)
    .delete(MCP_PATH, notOffered);
}

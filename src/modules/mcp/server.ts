import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { Deps } from "../../deps";
import type { Principal } from "../../http/auth";
import { ApiError } from "../../http/errors";
import { PARLEY_VERSION } from "../../version";
import * as schema from "./schema";
import { askQuestion, listConversations, readTranscript, searchConversations, summaryOf, transcriptText } from "./service";

const CITE = "Cite a moment as the recording_id and start_ms; get_transcript with that start_ms reads what was said around it.";

const INSTRUCTIONS = `Parley holds the user's recorded conversations, transcribed on their own appliance. Use search_conversations to find what was said about something, ask for an answer with citations, get_transcript to read a conversation (a page at a time), list_recordings to browse by date, and get_summary for a conversation's summary. ${CITE}`;

/**
 * A tool's result for a model: the structured result, and the same as JSON text for
 * clients that read only text (the protocol asks for both when a tool has an output schema).
 */
function result<T extends Record<string, unknown>>(structured: T) {
  return { structuredContent: structured, content: [{ type: "text" as const, text: JSON.stringify(structured) }] };
}

/**
 * The API's refusal as the tool's error: the SDK turns a thrown error into a result with
 * isError and its message, so the message carries the API's code and words.
 */
async function answer<T extends Record<string, unknown>>(run: () => Promise<T> | T) {
  try {
    return result(await run());
  } catch (err) {
    if (err instanceof ApiError) throw new Error(`${err.code}: ${err.message}`);
    throw err;
  }
}

/**
 * One MCP server for one request, acting as `principal` (already confined to one end user).
 * Stateless: built per request, so nothing of one caller is ever held for another.
 */
export function buildMcpServer(deps: Deps, principal: Principal): McpServer {
  const server = new McpServer({ name: "parley", version: PARLEY_VERSION }, { instructions: INSTRUCTIONS });

  server.registerTool(
    "search_conversations",
    {
      title: "Search conversations",
      description: `Finds passages of the user's recorded conversations by meaning and keywords, best first. Each result is about 60 words with its recording, speaker, moment (start_ms) and when it was recorded. ${CITE}`,
      inputSchema: schema.searchInput,
      outputSchema: schema.searchOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) => answer(() => searchConversations(deps, principal, args)),
  );

  server.registerTool(
    "ask",
    {
      title: "Ask about conversations",
      description:
        "Answers a question from the user's conversations with Parley's own model, citing the moments it rests on ([n] markers refer to citations). Prefer search_conversations when you can answer yourself from the passages; use ask for a ready answer. Each call is kept as an Ask session the user can see.",
      inputSchema: schema.askInput,
      outputSchema: schema.askOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (args) => answer(() => askQuestion(deps, principal, args)),
  );

  server.registerTool(
    "get_transcript",
    {
      title: "Read a transcript",
      description: `Reads a recording's transcript as timed lines with speaker names, ${schema.TRANSCRIPT_PAGE_CHARS} characters at most per call. Give start_ms (and end_ms) to read around a moment; when next_start_ms is not null, call again with start_ms = next_start_ms to read on. ${CITE}`,
      inputSchema: schema.transcriptInput,
      outputSchema: schema.transcriptOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) => answer(() => readTranscript(deps, principal, args)),
  );

  server.registerTool(
    "list_recordings",
    {
      title: "List recordings",
      description:
        "Lists the user's recordings, newest first, optionally within a date range: id, name, when, length and status (completed ones have a transcript). Continue with next_cursor.",
      inputSchema: schema.listRecordingsInput,
      outputSchema: schema.listRecordingsOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) => answer(() => listConversations(deps, principal, args)),
  );

  server.registerTool(
    "get_summary",
    {
      title: "Get a conversation's summary",
      description: "The newest finished summary of a recording's transcript (a few paragraphs). Errors when none was made yet; read the transcript instead.",
      inputSchema: schema.summaryInput,
      outputSchema: schema.summaryOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) => answer(() => summaryOf(deps, principal, args)),
  );

  server.registerResource(
    "transcript",
    new ResourceTemplate("parley://recordings/{id}/transcript", { list: undefined }),
    {
      title: "Transcript of a recording",
      description: "The whole transcript of a recording as plain text, one line per utterance: [m:ss] Speaker: words.",
      mimeType: "text/plain",
    },
    async (uri, { id }) => {
      try {
        return { contents: [{ uri: uri.href, mimeType: "text/plain", text: await transcriptText(deps, principal, String(id)) }] };
      } catch (err) {
        // A resource read has no result to mark as an error: the protocol's error carries the API's.
        if (err instanceof ApiError)
          throw new McpError(ErrorCode.InvalidParams, `${err.code}: ${err.message}`, { code: err.code, param: err.options.param ?? null });
        throw err;
      }
    },
  );

  return server;
}

import { z } from "zod";

/** GET /transcriptions/{id}, GET /summaries/{id}: `redacted=true` replaces identifiers in the texts (decision 106). */
export const redactedQuery = z.object({ redacted: z.enum(["true", "false"]).optional() });

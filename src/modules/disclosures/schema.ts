import { z } from "zod";
import { pageQuery } from "../../http/pagination";
import { isoDateTime } from "../../http/schemas";
import { AUDIT_ACTIONS } from "../audit/actions";

export const listDisclosuresQuery = z.object({
  ...pageQuery,
  /** json (the list envelope, default) or csv (every disclosure, as an attachment). */
  format: z.enum(["json", "csv"]).default("json"),
});
export type ListDisclosuresQuery = z.infer<typeof listDisclosuresQuery>;

/** One disclosure of an end user's content (decision 140): an audit row that named them as a subject, as their accounting shows it. */
export const disclosureSchema = z
  .object({
    /** The audit event's id (aud_...). */
    id: z.string(),
    created_at: isoDateTime,
    action: z.enum(AUDIT_ACTIONS),
    /** What was read or exported: recordings, transcriptions, summaries, chunks, an export. */
    resource_ids: z.array(z.string()),
    actor: z.object({
      /** secret, restricted, device ... for a key or token; admin for a person at the dashboard */
      type: z.string(),
      /** the key's id, or the administrator's */
      id: z.string().nullable(),
      /** the administrator's email; null for a key */
      email: z.string().nullable(),
    }),
    /** The key, token or dashboard session used; null on rows written before disclosures were recorded. */
    credential_id: z.string().nullable(),
    /** Why: the break-glass reason the person gave for this end user, or the export's matter; null when none was asked. */
    reason: z.string().nullable(),
    /** The break-glass grant the read was made under, if any. */
    break_glass_id: z.string().nullable(),
    request_id: z.string().nullable(),
    client_address: z.string().nullable(),
  })
  .meta({ id: "Disclosure" });
export type Disclosure = z.infer<typeof disclosureSchema>;

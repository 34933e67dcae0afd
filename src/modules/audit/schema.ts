import { z } from "zod";
import { pageQuery } from "../../http/pagination";
import { isoDateTime } from "../../http/schemas";
import { AUDIT_ACTIONS } from "./actions";

export const listAuditEventsQuery = z.object({
  ...pageQuery,
  resource_id: z.string().min(1).max(100).optional(),
  actor_id: z.string().min(1).max(200).optional(),
  action: z.enum(AUDIT_ACTIONS).optional(),
  created_after: isoDateTime.optional(),
  created_before: isoDateTime.optional(),
});
export type ListAuditEventsQuery = z.infer<typeof listAuditEventsQuery>;

/** One row of the access audit log (decision 102): ids only, never content. */
export const auditEventSchema = z
  .object({
    id: z.string(),
    /** Position in the hash chain. */
    sequence: z.number().int(),
    action: z.enum(AUDIT_ACTIONS),
    actor: z.object({
      /** secret, restricted, device ... for a credential; admin, operator (the CLI) or system */
      type: z.string(),
      /** the credential id (key id), admin id, CLI login or system task */
      id: z.string().nullable(),
      admin_email: z.string().nullable(),
      device_id: z.string().nullable(),
    }),
    resource_ids: z.array(z.string()),
    request_id: z.string().nullable(),
    client_address: z.string().nullable(),
    /** The key, token or dashboard session used (decision 140); null on older rows and the CLI's. */
    credential_id: z.string().nullable(),
    /** Whose content the row disclosed, and why (decision 140); null when it disclosed none. */
    subjects: z.array(z.object({ end_user_id: z.string(), reason: z.string().nullable(), break_glass_id: z.string().nullable() })).nullable(),
    created_at: isoDateTime,
    /** SHA-256 of the previous row's canonical form */
    prev_hash: z.string(),
    /** SHA-256 of this row's canonical form */
    hash: z.string(),
  })
  .meta({ id: "AuditEvent" });
export type AuditEvent = z.infer<typeof auditEventSchema>;

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

/**
 * What the audit log records (decision 102). Reads of content, and every change that
 * removes or protects it, or changes who may reach it. Names are `resource.verb`.
 */
export const AUDIT_ACTIONS = [
  // Reads of content
  "recording.audio.read",
  "transcription.read",
  "transcription.redacted.read",
  "transcription.export",
  "summary.read",
  "summary.redacted.read",
  "search.results.read",
  "ask.context.read",
  "ask.messages.read",
  // Corrections (a new revision of a transcript, issue 25)
  "transcription.revise",
  // Deletions
  "recording.delete",
  "end_user.delete",
  "device.delete",
  "ask_session.delete",
  // Retention (decision 103)
  "recording.expire",
  "recording.audio.expire",
  // Legal holds
  "legal_hold.create",
  "legal_hold.release",
  // Break-glass: a role without content opens one end user's for a while (issue 32)
  "break_glass.open",
  "break_glass.close",
  // eDiscovery exports
  "export.create",
  "export.download",
  "export.delete",
  "export.expire",
  // Keys and administration
  "key.create",
  "key.revoke",
  "project.create",
  "project.delete",
  "organization.update",
  // Dashboard accounts: who may reach content (issue 32)
  "admin.create",
  "admin.role_change",
  "admin.remove",
  "config.update",
  // Second factors of dashboard accounts (decision 151); the resource is the administrator
  "second_factor.enrol",
  "second_factor.disable",
  "second_factor.reset",
  "recovery_code.use",
  // The wearer's portal (decision 147): links issued, sign-ins, refused links, sign-outs
  "portal.invite.create",
  "portal.sign_in",
  "portal.sign_in.refused",
  "portal.sign_out",
  // Dashboard sign-in and sign-out, and a single sign-on refused (issue 32)
  "admin.sign_in",
  "admin.sign_out",
  "admin.sign_in.refused",
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

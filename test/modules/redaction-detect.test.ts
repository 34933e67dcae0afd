import { describe, expect, test } from "bun:test";
import { findPii, redactText } from "../../src/modules/redaction/detect";
import { redactTranscript } from "../../src/modules/redaction/service";

const redact = (text: string, names: string[] = []) => redactText(text, findPii(text, { names }));

// A consultation with one of every kind of identifier planted in ordinary speech.
const PLANTED = {
  name: ["Dr. Weber", "Ada Lovelace", "Mrs. Okafor"],
  date_of_birth: ["March 3rd, 1961", "04/11/1975"],
  phone: ["+49 30 1234567", "(555) 867-5309"],
  email: ["ada.lovelace@example.com", "okafor at clinic dot org"],
  address: ["42 Baker Street", "Hauptstraße 5"],
  record_number: ["MRN-0048213", "2024-CV-1187"],
  iban: ["DE89 3704 0044 0532 0130 00"],
  card_number: ["4111 1111 1111 1111"],
};
const CONSULTATION =
  "Good morning, I am Dr. Weber. Please confirm your details. My name is Ada Lovelace, born March 3rd, 1961. " +
  "Reach me at +49 30 1234567 or ada.lovelace@example.com, I live at 42 Baker Street. " +
  "My mother Mrs. Okafor was born 04/11/1975, her number is (555) 867-5309 and her email okafor at clinic dot org. " +
  "We moved from Hauptstraße 5 last year. Your chart is MRN-0048213 and the lawsuit is case number 2024-CV-1187. " +
  "The refund goes to DE89 3704 0044 0532 0130 00, not the card 4111 1111 1111 1111. " +
  "The blood pressure was 135 over 85, take 20 milligrams twice a day for 3 weeks and come back in 2026.";

describe("redaction rules", () => {
  test("removes every planted identifier and keeps the clinical content", () => {
    const out = redact(CONSULTATION);
    for (const [kind, values] of Object.entries(PLANTED)) {
      for (const value of values) expect({ kind, leaked: out.includes(value) }).toEqual({ kind, leaked: false });
    }
    for (const kept of ["Good morning", "blood pressure was 135 over 85", "20 milligrams twice a day for 3 weeks", "come back in 2026", "the lawsuit is"]) {
      expect(out).toContain(kept);
    }
  });

  test("each identifier is covered whole by one span of its kind", () => {
    const spans = findPii(CONSULTATION);
    const coveredBy = (value: string) => {
      const start = CONSULTATION.indexOf(value);
      return spans.find((s) => s.start <= start && s.end >= start + value.length)?.kind;
    };
    // A title stays ("Dr. [NAME]"): it says who spoke without saying who they are.
    const whole = (value: string) => value.replace(/^(?:Dr|Mrs)\. /, "");
    for (const [kind, values] of Object.entries(PLANTED))
      for (const value of values) expect({ value, kind: coveredBy(whole(value)) }).toEqual({ value, kind: kind as never });
  });

  test("a known name is found wherever it stands, in any case, and by its parts", () => {
    expect(redact("so zyanya said that quintero would call", ["Zyanya Quintero"])).toBe("so [NAME] said that [NAME] would call");
    expect(redact("Zyanya Quintero called", ["Zyanya Quintero"])).toBe("[NAME] called");
    // Not inside other words.
    expect(redact("the zyanyas", ["Zyanya"])).toBe("the zyanyas");
  });

  test("checksums keep ordinary numbers: a failed Luhn or mod-97 check is not a card or an IBAN", () => {
    expect(findPii("order 4111 1111 1111 1112 shipped").some((s) => s.kind === "card_number")).toBe(false);
    expect(findPii("code DE00 3704 0044 0532 0130 00").some((s) => s.kind === "iban")).toBe(false);
  });

  test("plain sentences without identifiers come back unchanged", () => {
    const text = "This is Going to hurt a little. I'm fine, thanks. The scan on Monday looked good and the dose stays at 5 mg.";
    expect(redact(text)).toBe(text);
  });
});

describe("redacting a transcript", () => {
  test("a name split between two segments is redacted in both, as found in the whole text", () => {
    const segments = [
      { text: "Good morning, my name is Ada", speaker: "SPEAKER_1" },
      { text: "Lovelace, born March 3rd, 1961.", speaker: "SPEAKER_2" },
    ];
    const transcript = {
      text: segments.map((s) => s.text).join(" "),
      segments,
      speakers: [
        { id: "SPEAKER_1", label: "Speaker 1" },
        { id: "SPEAKER_2", label: "Dr. Weber" },
      ],
    };
    const out = redactTranscript(transcript);
    expect(out.segments.map((s) => s.text)).toEqual(["Good morning, my name is [NAME]", "[NAME], born [DATE_OF_BIRTH]."]);
    expect(out.speakers.map((s) => s.label)).toEqual(["Speaker 1", "[NAME]"]);
  });
});

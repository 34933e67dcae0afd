import { GIVEN_NAMES } from "./given-names";

/** The kinds of identifier redaction removes; each becomes `[KIND]` in redacted text. */
export const PII_KINDS = ["name", "date_of_birth", "phone", "email", "address", "record_number", "iban", "card_number"] as const;
export type PiiKind = (typeof PII_KINDS)[number];

/** An identifier found in a text: [start, end) in UTF-16 units. */
export type PiiSpan = { start: number; end: number; kind: PiiKind };

/** An identifier as a string, of a known kind: what the language model found in a transcript (decision 108). */
export type FoundIdentifier = { kind: PiiKind; text: string };

/**
 * What the caller knows: names in this project (end users, known voices), matched wherever
 * they stand in any case; and identifiers found in the transcript before, matched verbatim.
 */
export type KnownIdentifiers = { names?: readonly string[]; found?: readonly FoundIdentifier[] };

type Rule = { kind: PiiKind; pattern: RegExp; group?: number; accept?: (match: string) => boolean };

const digitsOf = (s: string) => s.replace(/\D/g, "");

/** The Luhn checksum every payment card number carries. */
function luhn(number: string): boolean {
  const digits = digitsOf(number);
  if (digits.length < 13 || digits.length > 19) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/** ISO 13616's mod-97 check, so a random run of letters and digits is not taken for an IBAN. */
function ibanValid(text: string): boolean {
  const iban = text.replace(/\s/g, "").toUpperCase();
  if (iban.length < 15 || iban.length > 34) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const ch of rearranged) {
    const value = ch >= "A" ? ch.charCodeAt(0) - 55 : Number(ch);
    remainder = Number(`${remainder}${value}`) % 97;
  }
  return remainder === 1;
}

/** A pattern that matches these lower-case words in any case, for rules that must keep `[A-Z]` case-sensitive. */
const anyCase = (words: string) => words.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`);

const MONTH = "(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)";
const DATE =
  `(?:\\d{1,2}[./-]\\d{1,2}[./-](?:19|20)?\\d{2}|(?:19|20)\\d{2}-\\d{2}-\\d{2}|` +
  `${MONTH}\\.?\\s+\\d{1,2}(?:st|nd|rd|th)?,?\\s+(?:19|20)\\d{2}|` +
  `\\d{1,2}(?:st|nd|rd|th)?(?:\\s+of)?\\s+${MONTH}\\.?,?\\s+(?:19|20)\\d{2})`;
const STREET_SUFFIX = anyCase(
  "(?:street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|way|place|pl|terrace|close|square|parkway|highway|hwy)",
);
const TITLE = anyCase("(?:dr|doctor|mr|mrs|ms|miss|mx|prof|professor|nurse|judge|attorney|counsel(?:or)?|herr|frau)");
const CAPITALISED = "[A-Z][a-z'’-]+";

const RULES: readonly Rule[] = [
  { kind: "email", pattern: /\b[\w.%+-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}\b/gi },
  // As speech comes out of a transcriber: "ada dot lovelace at example dot com".
  {
    kind: "email",
    pattern: /\b[a-z0-9]+(?:\s+dot\s+[a-z0-9]+)*\s+at\s+[a-z0-9-]+(?:\s+dot\s+[a-z0-9-]+)*\s+dot\s+(?:com|org|net|edu|gov|de|uk|fr|es|it|nl|io)\b/gi,
  },
  { kind: "iban", pattern: /\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){2,7}(?:\s?[A-Z0-9]{1,4})?\b/g, accept: ibanValid },
  { kind: "card_number", pattern: /\b\d(?:[ -]?\d){12,18}\b/g, accept: luhn },
  {
    kind: "date_of_birth",
    pattern: new RegExp(
      `\\b(?:born(?:\\s+on)?|birth\\s*(?:date|day)?|date\\s+of\\s+birth|d\\.?o\\.?b\\.?|geboren(?:\\s+am)?)\\s*(?:is|was|:)?\\s*(${DATE})`,
      "gi",
    ),
    group: 1,
  },
  {
    kind: "record_number",
    pattern:
      /\b(?:mrn|medical\s+record(?:\s+(?:number|no\.?))?|record\s+(?:number|no\.?)|case\s+(?:number|no\.?|file)|patient\s+(?:id|number|no\.?)|chart\s+(?:number|no\.?)|docket(?:\s+(?:number|no\.?))?|file\s+(?:number|no\.?)|insurance\s+(?:id|number))\s*(?:is|was|:|#)?\s*#?\s*([A-Z]{0,4}[-/ ]?\d[\dA-Z]*(?:[-/][\dA-Z]+)*)/gi,
    group: 1,
  },
  { kind: "record_number", pattern: /\b(?:MRN|PID|CASE)[-#]?\d{4,}\b/g },
  {
    kind: "address",
    pattern: new RegExp(
      `\\b\\d{1,5}[a-z]?\\s+(?:${CAPITALISED}\\s+){1,3}${STREET_SUFFIX}\\b\\.?(?:,?\\s+${anyCase("(?:apt|apartment|suite|unit)")}\\.?\\s*\\w+)?`,
      "g",
    ),
  },
  // German-style: "Hauptstraße 5", "Am Lindenweg 12a".
  { kind: "address", pattern: /\b[A-ZÄÖÜ][a-zäöüß]+(?:straße|strasse|str\.|weg|gasse|platz|allee|ring|damm)\s+\d{1,4}[a-z]?\b/g },
  // Phone numbers: 7 to 15 digits with the usual separators; a date is not one.
  {
    kind: "phone",
    pattern: /(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{2,5}(?:[\s.-]\d{2,8}){1,4}\b|\b\d{7,12}\b/g,
    accept: (m) => digitsOf(m).length >= 7 && digitsOf(m).length <= 15,
  },
  { kind: "name", pattern: new RegExp(`\\b${TITLE}\\.?\\s+((?:${CAPITALISED}\\s+)?${CAPITALISED})`, "g"), group: 1 },
  {
    kind: "name",
    pattern: new RegExp(`\\b${anyCase("(?:my name is|i am|i'm|this is|name's|patient is|client is)")}\\s+(${CAPITALISED}(?:\\s+${CAPITALISED})?)`, "g"),
    group: 1,
    accept: (m) => !COMMON_CAPITALISED.has(m.split(/\s/)[0]!.toLowerCase()) && !new RegExp(`^${TITLE}$`).test(m.split(/\s/)[0]!),
  },
];

// Words a transcriber capitalises that follow "this is" / "I'm" and are not names.
const COMMON_CAPITALISED = new Set([
  "the",
  "a",
  "an",
  "it",
  "not",
  "going",
  "sorry",
  "fine",
  "here",
  "just",
  "so",
  "very",
  "okay",
  "ok",
  "good",
  "great",
  "yes",
  "no",
  "what",
  "that",
  "monday",
  "tuesday",
  "wednesday",
  "thursday",
  "friday",
  "saturday",
  "sunday",
]);

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Names from the dictionary of given names, with the capitalised surname that follows when there is one. */
function dictionaryNames(text: string): PiiSpan[] {
  const spans: PiiSpan[] = [];
  for (const m of text.matchAll(new RegExp(`\\b(${CAPITALISED})(\\s+${CAPITALISED})?`, "g"))) {
    if (!GIVEN_NAMES.has(m[1]!.toLowerCase())) continue;
    spans.push({ start: m.index!, end: m.index! + m[0].length, kind: "name" });
  }
  return spans;
}

/** Each known name, whole and by its parts of three letters or more, case-insensitively. */
function knownNames(text: string, names: readonly string[]): PiiSpan[] {
  const parts = new Set<string>();
  for (const name of names) {
    const trimmed = name.trim();
    if (trimmed.length >= 3) parts.add(trimmed);
    for (const part of trimmed.split(/\s+/)) if (part.replace(/\W/g, "").length >= 3) parts.add(part);
  }
  if (parts.size === 0) return [];
  const alternatives = [...parts]
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp)
    .join("|");
  return [...text.matchAll(new RegExp(`(?<![\\p{L}\\p{N}])(?:${alternatives})(?![\\p{L}\\p{N}])`, "giu"))].map((m) => ({
    start: m.index!,
    end: m.index! + m[0].length,
    kind: "name" as const,
  }));
}

/** Where a string stands verbatim as whole words (case-sensitive: "Will" the name, not "will"). */
export function verbatimMatches(text: string, value: string): { start: number; end: number }[] {
  return [...text.matchAll(new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(value)}(?![\\p{L}\\p{N}])`, "gu"))].map((m) => ({
    start: m.index!,
    end: m.index! + m[0].length,
  }));
}

const foundIdentifiers = (text: string, found: readonly FoundIdentifier[]): PiiSpan[] =>
  found.flatMap(({ kind, text: value }) => verbatimMatches(text, value).map((at) => ({ ...at, kind })));

/** Overlapping spans merged into one, which keeps the kind of the span that starts first. */
function merge(spans: PiiSpan[]): PiiSpan[] {
  const sorted = spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: PiiSpan[] = [];
  for (const span of sorted) {
    const last = merged[merged.length - 1];
    if (last && span.start < last.end) last.end = Math.max(last.end, span.end);
    else merged.push({ ...span });
  }
  return merged;
}

/** Every identifier the rules and dictionaries find in a text. */
export function findPii(text: string, known: KnownIdentifiers = {}): PiiSpan[] {
  const spans: PiiSpan[] = [];
  for (const rule of RULES) {
    for (const m of text.matchAll(rule.pattern)) {
      const value = rule.group ? m[rule.group] : m[0];
      if (!value || (rule.accept && !rule.accept(value))) continue;
      const start = m.index! + (rule.group ? m[0].indexOf(value) : 0);
      spans.push({ start, end: start + value.length, kind: rule.kind });
    }
  }
  spans.push(...knownNames(text, known.names ?? []), ...foundIdentifiers(text, known.found ?? []), ...dictionaryNames(text));
  return merge(spans);
}

/** The text with each identifier replaced by its kind in brackets, e.g. `[PHONE]`. */
export function redactText(text: string, spans: readonly PiiSpan[]): string {
  let out = "";
  let at = 0;
  for (const span of spans) {
    out += `${text.slice(at, span.start)}[${span.kind.toUpperCase()}]`;
    at = span.end;
  }
  return out + text.slice(at);
}

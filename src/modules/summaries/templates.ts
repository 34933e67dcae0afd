import clinicalPrompt from "../../../prompts/summary/clinical.v3.md" with { type: "text" };
import clinicalSchema from "../../../prompts/summary/clinical.v1.schema.json";
import generalPrompt from "../../../prompts/summary/general.v3.md" with { type: "text" };
import generalSchema from "../../../prompts/summary/general.v1.schema.json";
import legalPrompt from "../../../prompts/summary/legal.v3.md" with { type: "text" };
import legalSchema from "../../../prompts/summary/legal.v1.schema.json";
import mapPrompt from "../../../prompts/summary/map.v2.md" with { type: "text" };
import salesPrompt from "../../../prompts/summary/sales.v3.md" with { type: "text" };
import salesSchema from "../../../prompts/summary/sales.v1.schema.json";
import type { TemplateName } from "./schema";

type Property = { type: string; title: string; maxLength?: number; maxItems?: number; items?: { type?: string; maxLength?: number } };
/** A JSON schema of an object whose properties are strings or bounded arrays (a grammar for the model). */
export type OutputSchema = { type?: string; properties: Record<string, Property>; required: string[]; additionalProperties?: boolean };

/**
 * A summary template: a versioned prompt file and the JSON schema of what it produces; the
 * model answers in that schema with citations added (citations.ts).
 */
export type Template = { name: TemplateName; version: string; format: string; prompt: string; schema: OutputSchema };

/**
 * The current version of each template. A wording change adds a new file (general.v3.md)
 * and points here at it, so every stored summary names the prompt that made it; v2 numbers
 * the transcript's segments and asks for citations (decision 159); v3 writes each statement
 * and its citations as one array, a fifth fewer tokens to generate (decision 232).
 */
export const TEMPLATES: Record<TemplateName, Template> = {
  general: { name: "general", version: "general.v3", format: "summary", prompt: generalPrompt, schema: generalSchema },
  sales: { name: "sales", version: "sales.v3", format: "summary", prompt: salesPrompt, schema: salesSchema },
  clinical: { name: "clinical", version: "clinical.v3", format: "medical_note", prompt: clinicalPrompt, schema: clinicalSchema },
  legal: { name: "legal", version: "legal.v3", format: "summary", prompt: legalPrompt, schema: legalSchema },
};

/** The prompt that condenses one part of a long transcript (the map step of map-reduce). */
export const MAP_PROMPT = { version: "map.v2", prompt: mapPrompt };

/** The structured output as readable Markdown: one section per schema property, in schema order. */
export function renderSummary(template: Template, output: Record<string, unknown>): string {
  const sections: string[] = [];
  for (const [key, property] of Object.entries(template.schema.properties)) {
    const value = output[key];
    if (Array.isArray(value)) {
      const items = value.map((v) => String(v).trim()).filter(Boolean);
      if (items.length) sections.push(`## ${property.title}\n${items.map((i) => `- ${i}`).join("\n")}`);
    } else if (typeof value === "string" && value.trim()) {
      sections.push(key === "title" ? `# ${value.trim()}` : `## ${property.title}\n${value.trim()}`);
    }
  }
  return sections.join("\n\n");
}

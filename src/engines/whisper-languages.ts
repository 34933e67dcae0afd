/**
 * The language codes whisper.cpp knows (its g_lang table, in token order). A code outside
 * it is not an error inside whisper.cpp: a multilingual model decodes with an invalid
 * language token and the binding then fails to name the language outside any promise
 * handler, so the call never settles. Every language is checked against this list first.
 */
export const WHISPER_LANGUAGES: ReadonlySet<string> = new Set(
  (
    "en zh de es ru ko fr ja pt tr pl ca nl ar sv it id hi fi vi he uk el ms cs ro da hu ta no th ur hr bg lt la mi ml cy sk te fa lv bn sr az sl kn et " +
    "mk br eu is hy ne mn bs kk sq sw gl mr pa si km sn yo so af oc ka be tg sd gu am yi lo uz fo ht ps tk nn mt sa lb my bo tl mg as tt haw ln ha ba jw su yue"
  ).split(" "),
);

/**
 * The whisper code for a language tag: the tag itself, or its primary subtag for a regional
 * tag (pt-BR -> pt, zh-Hant -> zh), since whisper has one token per language, not per region.
 * null when whisper does not know the language.
 */
export function whisperLanguage(tag: string): string | null {
  const base = tag.toLowerCase().split("-")[0] ?? "";
  return WHISPER_LANGUAGES.has(base) ? base : null;
}

/** A language whisper does not know (a request checked before this list existed, or a bad config value). */
export class UnsupportedLanguageError extends Error {
  constructor(readonly language: string) {
    super(`The language '${language}' is not one Whisper can transcribe; use a code such as en, de or pt (or pt-BR), or omit it to detect the language.`);
  }
}

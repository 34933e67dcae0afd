import { UnsupportedLanguageError } from "./whisper-languages";

/**
 * The 25 European languages parakeet-tdt-0.6b-v3 transcribes (NVIDIA's model card):
 * Bulgarian, Croatian, Czech, Danish, Dutch, English, Estonian, Finnish, French, German,
 * Greek, Hungarian, Italian, Latvian, Lithuanian, Maltese, Polish, Portuguese, Romanian,
 * Slovak, Slovenian, Spanish, Swedish, Russian and Ukrainian. It takes no language token:
 * it recognises these by itself and transcribes anything else as one of them.
 */
export const PARAKEET_LANGUAGES: ReadonlySet<string> = new Set("bg hr cs da nl en et fi fr de el hu it lv lt mt pl pt ro sk sl es sv ru uk".split(" "));

/** The Parakeet code for a language tag (pt-BR -> pt), or null when Parakeet does not cover it. */
export function parakeetLanguage(tag: string): string | null {
  const base = tag.toLowerCase().split("-")[0] ?? "";
  return PARAKEET_LANGUAGES.has(base) ? base : null;
}

/**
 * What a transcription reports when no language was asked of Parakeet: "und" (BCP 47's
 * undetermined), since the model recognises the language without naming it (decision 183).
 */
export const UNDETERMINED_LANGUAGE = "und";

/** A language Parakeet does not cover and no whisper model is installed to take it (a job failure the reader can act on). */
export class ParakeetLanguageError extends UnsupportedLanguageError {
  constructor(language: string, fallback: { model: string; install: string }) {
    super(language);
    this.message = `The language '${language}' is not one Parakeet covers (${[...PARAKEET_LANGUAGES].join(", ")}); such recordings are transcribed by ${fallback.model} once it is installed (${fallback.install}).`;
  }
}

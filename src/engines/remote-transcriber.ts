import { RemoteClient, RemoteEngineError, type RemoteEndpoint, type RemotePolicy } from "./remote-http";
import type { TranscribedSegment, TranscribedWord, TranscribeOptions, Transcriber, TranscriptionResult } from "./transcriber";
import { UnsupportedLanguageError, whisperLanguage } from "./whisper-languages";
import { byteCount, vocabularyPrompt } from "./whisper-prompt";

/** verbose_json as OpenAI, whisper.cpp's whisper-server, Speaches and vLLM write it; every field optional, as servers differ. */
type VerboseJson = {
  language?: string;
  text?: string;
  segments?: { start?: number; end?: number; text?: string; avg_logprob?: number; words?: RemoteWord[] }[];
  /** OpenAI and Speaches give words beside the segments (timestamp_granularities[]=word). */
  words?: RemoteWord[];
};
/** whisper-server gives tokens as words, with their probability; OpenAI gives whole words without one. */
type RemoteWord = { word?: string; start?: number; end?: number; probability?: number };

/** whisper's language names (verbose_json says "english"), by the codes Parley stores. */
const LANGUAGE_NAMES: Record<string, string> = Object.fromEntries(
  (
    "en:english,zh:chinese,de:german,es:spanish,ru:russian,ko:korean,fr:french,ja:japanese,pt:portuguese,tr:turkish,pl:polish,ca:catalan,nl:dutch,ar:arabic," +
    "sv:swedish,it:italian,id:indonesian,hi:hindi,fi:finnish,vi:vietnamese,he:hebrew,uk:ukrainian,el:greek,ms:malay,cs:czech,ro:romanian,da:danish,hu:hungarian," +
    "ta:tamil,no:norwegian,th:thai,ur:urdu,hr:croatian,bg:bulgarian,lt:lithuanian,la:latin,mi:maori,ml:malayalam,cy:welsh,sk:slovak,te:telugu,fa:persian," +
    "lv:latvian,bn:bengali,sr:serbian,az:azerbaijani,sl:slovenian,kn:kannada,et:estonian,mk:macedonian,br:breton,eu:basque,is:icelandic,hy:armenian,ne:nepali," +
    "mn:mongolian,bs:bosnian,kk:kazakh,sq:albanian,sw:swahili,gl:galician,mr:marathi,pa:punjabi,si:sinhala,km:khmer,sn:shona,yo:yoruba,so:somali,af:afrikaans," +
    "oc:occitan,ka:georgian,be:belarusian,tg:tajik,sd:sindhi,gu:gujarati,am:amharic,yi:yiddish,lo:lao,uz:uzbek,fo:faroese,ht:haitian creole,ps:pashto," +
    "tk:turkmen,nn:nynorsk,mt:maltese,sa:sanskrit,lb:luxembourgish,my:myanmar,bo:tibetan,tl:tagalog,mg:malagasy,as:assamese,tt:tatar,haw:hawaiian,ln:lingala," +
    "ha:hausa,ba:bashkir,jw:javanese,su:sundanese,yue:cantonese"
  )
    .split(",")
    .map((pair) => pair.split(":").reverse() as [string, string]),
);

/** The code for a verbose_json language, which servers write as a name ("english") or a code ("en"). */
export function languageCode(language: string | undefined): string | null {
  const name = language?.trim().toLowerCase() ?? "";
  return LANGUAGE_NAMES[name] ?? whisperLanguage(name);
}

/** 16 kHz mono float samples as a 16-bit PCM WAV file: what every transcription server decodes. */
export function wavFile(pcm16k: Float32Array): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(44 + pcm16k.length * 2);
  const view = new DataView(bytes.buffer);
  const ascii = (at: number, s: string) => {
    for (let i = 0; i < s.length; i++) bytes[at + i] = s.charCodeAt(i);
  };
  ascii(0, "RIFF");
  view.setUint32(4, 36 + pcm16k.length * 2, true);
  ascii(8, "WAVEfmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // mono
  view.setUint32(24, 16_000, true);
  view.setUint32(28, 32_000, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  ascii(36, "data");
  view.setUint32(40, pcm16k.length * 2, true);
  for (let i = 0; i < pcm16k.length; i++) view.setInt16(44 + i * 2, Math.round(Math.max(-1, Math.min(1, pcm16k[i]!)) * 32767), true);
  return bytes;
}

/** whisper-server's markers ([_BEG_], [_TT_150]) are tokens, not words. */
const SPECIAL = /^\s*\[_[A-Z0-9_]+\]\s*$/;

/**
 * Words with timings from a server's list. whisper-server lists tokens: a token that does not
 * start with a space continues the word before it. A word's confidence is its tokens' lowest
 * probability; null where the server gives none (OpenAI).
 */
function wordsOf(list: RemoteWord[] | undefined, seconds: number): TranscribedWord[] {
  const words: TranscribedWord[] = [];
  for (const w of list ?? []) {
    const text = w.word ?? "";
    if (!text.trim() || SPECIAL.test(text) || typeof w.start !== "number" || typeof w.end !== "number") continue;
    const confidence = typeof w.probability === "number" ? w.probability : null;
    const last = words.at(-1);
    if (last && !/^\s/.test(text) && w.start >= last.start) {
      last.text += text;
      last.end = Math.min(seconds, Math.max(last.end, w.end));
      last.confidence = last.confidence === null || confidence === null ? null : Math.min(last.confidence, confidence);
      continue;
    }
    const start = Math.min(seconds, w.start);
    words.push({ start, end: Math.min(seconds, Math.max(start, w.end)), text: text.trim(), confidence });
  }
  for (const w of words) w.text = w.text.trim();
  return words;
}

/**
 * Speech to text on a remote OpenAI-compatible server (`POST /audio/transcriptions`,
 * response_format=verbose_json): whisper.cpp's whisper-server, Speaches, vLLM, OpenAI.
 * Parley decodes, detects voice and diarizes; the server only transcribes the PCM it is sent,
 * as a WAV file. Calls do not take the local cores' turns (decision 110): up to
 * PARLEY_REMOTE_CONCURRENCY go at once, for the server to batch (decision 188).
 */
export class RemoteTranscriber implements Transcriber {
  readonly model: string;
  private readonly client: RemoteClient;
  private readonly temperatureInc: number | undefined;

  /**
   * temperatureInc: whisper.cpp's fallback step, sent as its `temperature_inc` field; 0 turns the
   * fallback off. whisper-server takes it only per request (its -nf flag is parsed and never
   * applied); unset, nothing is sent and the server keeps its own (0.2). Decision 197.
   */
  constructor(endpoint: RemoteEndpoint & { temperatureInc?: number }, policy: RemotePolicy) {
    this.model = endpoint.model;
    this.temperatureInc = endpoint.temperatureInc;
    this.client = new RemoteClient("transcription", endpoint, policy);
  }

  /** One real call, one attempt, on a second of silence (`parley doctor`): what the server said it heard, or the error naming it. */
  async probe(): Promise<string> {
    const { language, segments } = await this.transcribe(new Float32Array(16_000), { language: "en", once: true });
    return `${segments.length} segment(s) for 1 s of silence, language ${language}`;
  }

  async transcribe(pcm16k: Float32Array, options: TranscribeOptions & { once?: boolean }): Promise<TranscriptionResult> {
    const language = options.language ? whisperLanguage(options.language) : null;
    if (options.language && !language) throw new UnsupportedLanguageError(options.language);
    const form = new FormData();
    form.append("file", new Blob([wavFile(pcm16k)], { type: "audio/wav" }), "audio.wav");
    form.append("model", this.model);
    form.append("response_format", "verbose_json");
    form.append("temperature", "0");
    if (this.temperatureInc !== undefined) form.append("temperature_inc", String(this.temperatureInc));
    form.append("timestamp_granularities[]", "segment");
    form.append("timestamp_granularities[]", "word");
    // Absent, a server detects the language (whisper-server only when started with -l auto).
    if (language) form.append("language", language);
    // No tokenizer here: bytes bound whisper's tokens (decision 158).
    const prompt = vocabularyPrompt(options.vocabulary ?? [], byteCount);
    if (prompt) form.append("prompt", prompt);
    const body = await this.client.postJson<VerboseJson>({
      path: "/audio/transcriptions",
      body: form,
      signal: options.signal,
      excludeWait: options.excludeWait,
      once: options.once,
    });
    if (!Array.isArray(body.segments))
      throw new RemoteEngineError(
        `The transcription server at ${this.client.url} answered without segments (is response_format=verbose_json supported?).`,
        200,
      );
    const seconds = pcm16k.length / 16_000;
    const loose = wordsOf(body.words, seconds);
    const segments: TranscribedSegment[] = body.segments.map((s) => {
      const start = Math.min(seconds, Math.max(0, s.start ?? 0));
      const end = Math.min(seconds, Math.max(start, s.end ?? start));
      const words = s.words ? wordsOf(s.words, seconds) : loose.filter((w) => w.start >= start && w.start < end);
      const scored = words.filter((w) => w.confidence !== null);
      // Mean word probability, as the local build scores a segment; none given: the pipeline scores it (decision 042).
      const confidence = scored.length && scored.length === words.length ? scored.reduce((sum, w) => sum + w.confidence!, 0) / scored.length : null;
      return { start, end, text: s.text ?? "", confidence, ...(words.length ? { words } : {}) };
    });
    return { language: languageCode(body.language) ?? language ?? "en", segments };
  }
}

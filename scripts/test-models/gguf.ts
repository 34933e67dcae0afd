import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { GGML_TYPES, tensorBytes } from "../../src/model-files/ggml-header";
import { random } from "./random";

/**
 * Writes random-weight GGUF language models with a SentencePiece-style vocabulary
 * (byte-fallback tokens cover any text, so JSON-schema grammars can always be satisfied):
 * the tiny llama one tests load (a few hundred KB, f32), and a stand-in with the shapes and
 * Q4_K_M tensor types of the default LLM (Qwen2.5 1.5B Instruct) for benches, whose English
 * word pieces make a text as many tokens as Qwen2.5's tokenizer would (decision 213). Random
 * weights give random text; tests assert plumbing, benches measure speed.
 */

/**
 * The tiny model's context window. Its byte-level vocabulary makes everything long in
 * tokens (a summary prompt is ~900): at 2048 the longest answer the summary schemas allow
 * could not fit beside a prompt, and summaries of even a short transcript ran out of room.
 */
export const TINY_GGUF_CONTEXT = 4096;
const ALIGNMENT = 32;

export type GgufShape = {
  architecture: string;
  name: string;
  /** llama.cpp's llama_ftype: 0 all F32, 2 MOSTLY_Q4_0, 15 MOSTLY_Q4_K_M. */
  fileType: number;
  contextLength: number;
  embeddingLength: number;
  blockCount: number;
  feedForwardLength: number;
  headCount: number;
  headCountKv: number;
  vocabSize: number;
  ropeFreqBase?: number;
  rmsEpsilon: number;
  /** Qwen2 has biases on q, k and v. */
  qkvBias: boolean;
  /** No output.weight: the token embedding doubles as the output layer (tie_word_embeddings). */
  tiedOutput: boolean;
};

/** Qwen2.5-1.5B-Instruct's config.json as its GGUF states it, in Qwen's Q4_K_M file (llama_ftype 15). */
const QWEN2_5_1_5B: GgufShape = {
  architecture: "qwen2",
  name: "parley-qwen2.5-1.5b-shape",
  fileType: 15,
  contextLength: 32768,
  embeddingLength: 1536,
  blockCount: 28,
  feedForwardLength: 8960,
  headCount: 12,
  headCountKv: 2,
  vocabSize: 151936,
  ropeFreqBase: 1e6,
  rmsEpsilon: 1e-6,
  qkvBias: true,
  tiedOutput: true,
};

export const GGUF_SHAPES = {
  tiny: {
    architecture: "llama",
    name: "parley-tiny-test",
    fileType: 0,
    contextLength: TINY_GGUF_CONTEXT,
    embeddingLength: 64,
    blockCount: 1,
    feedForwardLength: 128,
    headCount: 2,
    headCountKv: 2,
    vocabSize: 0,
    rmsEpsilon: 1e-5,
    qkvBias: false,
    tiedOutput: false,
  },
  /** Qwen's Q4_K_M file, the default LLM's. */
  "qwen2.5-1.5b-q4_k_m": QWEN2_5_1_5B,
  /** The same model as Qwen's Q4_0 file: Q4_0 throughout, Q6_K for the (tied) output layer. */
  "qwen2.5-1.5b-q4_0": { ...QWEN2_5_1_5B, fileType: 2 },
} satisfies Record<string, GgufShape>;

enum T {
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  STRING = 8,
  ARRAY = 9,
}
type Value =
  | { type: T.UINT32 | T.INT32 | T.FLOAT32; value: number }
  | { type: T.STRING; value: string }
  | { type: T.ARRAY; of: T.INT32 | T.FLOAT32 | T.STRING; values: (number | string)[] };

class Writer {
  private parts: Uint8Array[] = [];
  size = 0;
  push(b: Uint8Array) {
    this.parts.push(b);
    this.size += b.byteLength;
  }
  u32(v: number) {
    this.push(new Uint8Array(new Uint32Array([v]).buffer));
  }
  u64(v: number) {
    this.push(new Uint8Array(new BigUint64Array([BigInt(v)]).buffer));
  }
  string(s: string) {
    const b = new TextEncoder().encode(s);
    this.u64(b.length);
    this.push(b);
  }
  scalar(type: T, v: number | string) {
    if (type === T.STRING) return this.string(v as string);
    const arr = type === T.FLOAT32 ? new Float32Array([v as number]) : type === T.INT32 ? new Int32Array([v as number]) : new Uint32Array([v as number]);
    this.push(new Uint8Array(arr.buffer));
  }
  value(v: Value) {
    this.u32(v.type);
    if (v.type !== T.ARRAY) return this.scalar(v.type, v.value);
    this.u32(v.of);
    this.u64(v.values.length);
    for (const x of v.values) this.scalar(v.of, x);
  }
  pad() {
    const rest = (ALIGNMENT - (this.size % ALIGNMENT)) % ALIGNMENT;
    if (rest) this.push(new Uint8Array(rest));
  }
  result(): Uint8Array {
    return Buffer.concat(this.parts);
  }
}

/**
 * What a real model's vocabulary has as whole tokens, from a word list
 * (scripts/test-models/english-words.txt): punctuation after a space and before a line end,
 * JSON's punctuation between values, contractions, the words with "▁" marking a word start, capitalised (a sentence's first
 * word) and in capitals (a label) when short, then inside a word, short words first (what a
 * word outside the list splits into). In this order until the vocabulary is full.
 */
function* wordPieces(): Generator<string> {
  const words = readFileSync(join(import.meta.dir, "english-words.txt"), "utf8")
    .split("\n")
    .filter((w) => w && !w.startsWith("#"));
  const closures = (forms: string[]) => forms.flatMap((w) => Array.from(w, (_, i) => w.slice(0, i + 1)));
  for (const p of PUNCTUATION) yield* [p, `▁${p}`, `${p}\n`];
  yield* closures(JSON_RUNS);
  yield* ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d"];
  const upTo = (letters: number) => words.filter((w) => w.length <= letters);
  yield* closures(words.map((w) => `▁${w}`));
  yield* closures(upTo(7).map((w) => `▁${w[0]!.toUpperCase()}${w.slice(1)}`));
  yield* closures(upTo(5).map((w) => `▁${w.toUpperCase()}`));
  yield* closures(words.toSorted((a, b) => a.length - b.length));
}

const PUNCTUATION = [..."\".,:;?!'()[]{}-_/*&%$#@+=<>"];
/** The punctuation JSON writes between values, whole tokens in a real model's vocabulary (a summary's answer is JSON). */
const JSON_RUNS = [
  '{"',
  '":"',
  '","',
  '":[',
  '":[{"',
  '"},{"',
  '"}],"',
  '"}]}',
  '"}]',
  '],"',
  ']},{"',
  "]}]",
  ']}],"',
  "]}]}",
  '":{"',
  '["',
  '"]',
  '"],"',
  '"]}',
  "},{",
  "}}",
  "[]",
];

/**
 * <unk> <s> </s>, the 256 byte tokens, then pieces with "▁" marking a word start; up to
 * `size` (a published model's vocabulary size sets the cost of its output layer), English
 * word pieces then made-up ones. llama.cpp's SentencePiece tokenizer merges two neighbouring
 * pieces when their concatenation is a piece, best score first: with every prefix of "▁word"
 * a piece, a word's first piece can always take in the next one, so every listed word is one
 * token, and English costs about as many tokens as with a real model's vocabulary (decision 213).
 * The tiny test model (size 0) keeps only the fixed pieces.
 */
function vocabulary(size: number) {
  const tokens = ["<unk>", "<s>", "</s>"];
  const types = [2, 3, 3]; // unknown, control, control
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`);
    types.push(6); // byte
  }
  const pieces = new Set([
    "▁",
    ..."abcdefghijklmnopqrstuvwxyz0123456789",
    "▁the",
    "▁a",
    "▁and",
    "▁of",
    "▁to",
    "▁is",
    "▁summary",
    "▁meeting",
    '{"',
    '":',
    '",',
    '"}',
    "▁true",
    "▁false",
  ]);
  const room = () => tokens.length + pieces.size < size;
  for (const p of room() ? wordPieces() : []) {
    if (!room()) break;
    pieces.add(p);
  }
  for (let i = 0; room(); i++) pieces.add(`▁w${i.toString(36)}`);
  for (const p of pieces) {
    tokens.push(p);
    types.push(1); // normal
  }
  const scores = tokens.map((_, i) => (types[i] === 1 ? -i : 0));
  return { tokens, types, scores };
}

/** llama.cpp's use_more_bits: which layers Q4_K_M gives Q6_K for attn_v and ffn_down. */
const moreBits = (layer: number, layers: number) =>
  layer < Math.floor(layers / 8) || layer >= Math.floor((7 * layers) / 8) || (layer - Math.floor(layers / 8)) % 3 === 2;

type Tensor = { name: string; ne: number[]; type: number };

/**
 * The tensors and their types. Q4_K_M (llama.cpp's llama_tensor_get_type): Q4_K, except
 * Q6_K for the output layer (the token embedding when tied) and for attn_v and ffn_down of
 * the layers use_more_bits picks; norms and biases F32.
 */
export function ggufTensors(shape: GgufShape, nVocab: number): Tensor[] {
  const n = shape.embeddingLength;
  const kv = (n / shape.headCount) * shape.headCountKv;
  const ff = shape.feedForwardLength;
  const q4km = shape.fileType === 15;
  const q40 = shape.fileType === 2;
  const weight = (moreBits: boolean, output = false) =>
    q4km ? (moreBits ? GGML_TYPES.q6_k : GGML_TYPES.q4_k) : q40 ? (output ? GGML_TYPES.q6_k : GGML_TYPES.q4_0) : GGML_TYPES.f32;
  const f32 = GGML_TYPES.f32;
  const tensors: Tensor[] = [
    { name: "token_embd.weight", ne: [n, nVocab], type: weight(shape.tiedOutput, shape.tiedOutput) },
    { name: "output_norm.weight", ne: [n], type: f32 },
  ];
  if (!shape.tiedOutput) tensors.push({ name: "output.weight", ne: [n, nVocab], type: weight(true, true) });
  for (let i = 0; i < shape.blockCount; i++) {
    const b = `blk.${i}`;
    const more = moreBits(i, shape.blockCount);
    tensors.push(
      { name: `${b}.attn_norm.weight`, ne: [n], type: f32 },
      { name: `${b}.attn_q.weight`, ne: [n, n], type: weight(false) },
      { name: `${b}.attn_k.weight`, ne: [n, kv], type: weight(false) },
      { name: `${b}.attn_v.weight`, ne: [n, kv], type: weight(more) },
      ...(shape.qkvBias
        ? [
            { name: `${b}.attn_q.bias`, ne: [n], type: f32 },
            { name: `${b}.attn_k.bias`, ne: [kv], type: f32 },
            { name: `${b}.attn_v.bias`, ne: [kv], type: f32 },
          ]
        : []),
      { name: `${b}.attn_output.weight`, ne: [n, n], type: weight(false) },
      { name: `${b}.ffn_norm.weight`, ne: [n], type: f32 },
      { name: `${b}.ffn_gate.weight`, ne: [n, ff], type: weight(false) },
      { name: `${b}.ffn_up.weight`, ne: [n, ff], type: weight(false) },
      { name: `${b}.ffn_down.weight`, ne: [ff, n], type: weight(more) },
    );
  }
  return tensors;
}

function metadata(shape: GgufShape, vocab: ReturnType<typeof vocabulary>): [string, Value][] {
  const a = shape.architecture;
  const u32 = (value: number): Value => ({ type: T.UINT32, value });
  return [
    ["general.architecture", { type: T.STRING, value: a }],
    ["general.name", { type: T.STRING, value: shape.name }],
    ["general.file_type", u32(shape.fileType)],
    [`${a}.context_length`, u32(shape.contextLength)],
    [`${a}.embedding_length`, u32(shape.embeddingLength)],
    [`${a}.block_count`, u32(shape.blockCount)],
    [`${a}.feed_forward_length`, u32(shape.feedForwardLength)],
    [`${a}.attention.head_count`, u32(shape.headCount)],
    [`${a}.attention.head_count_kv`, u32(shape.headCountKv)],
    [`${a}.rope.dimension_count`, u32(shape.embeddingLength / shape.headCount)],
    ...(shape.ropeFreqBase ? [[`${a}.rope.freq_base`, { type: T.FLOAT32, value: shape.ropeFreqBase }] as [string, Value]] : []),
    [`${a}.attention.layer_norm_rms_epsilon`, { type: T.FLOAT32, value: shape.rmsEpsilon }],
    ["tokenizer.ggml.model", { type: T.STRING, value: "llama" }],
    ["tokenizer.ggml.tokens", { type: T.ARRAY, of: T.STRING, values: vocab.tokens }],
    ["tokenizer.ggml.scores", { type: T.ARRAY, of: T.FLOAT32, values: vocab.scores }],
    ["tokenizer.ggml.token_type", { type: T.ARRAY, of: T.INT32, values: vocab.types }],
    ["tokenizer.ggml.unknown_token_id", u32(0)],
    ["tokenizer.ggml.bos_token_id", u32(1)],
    ["tokenizer.ggml.eos_token_id", u32(2)],
  ];
}

/**
 * A tensor's bytes: F32 norms at 1 (activations stay in range), other F32 small noise; K-quant
 * blocks random with a small scale (Q4_K: d and dmin at bytes 0 and 2; Q6_K: d at byte 208).
 */
function tensorData(t: Tensor, rand: () => number, pool: () => Uint32Array): Uint8Array {
  const count = t.ne.reduce((a, b) => a * b, 1);
  if (t.type === GGML_TYPES.f32)
    return new Uint8Array(Float32Array.from({ length: count }, () => (t.name.endsWith("norm.weight") ? 1 : (rand() - 0.5) * 0.2)).buffer);
  const out = new Uint8Array(tensorBytes(t.type, count));
  // Tiled from one random pool: filling a gigabyte one random draw at a time takes minutes.
  const words = new Uint32Array(out.buffer);
  const tile = pool();
  for (let i = 0; i < words.length; i += tile.length) words.set(tile.subarray(0, Math.min(tile.length, words.length - i)), i);
  const view = new DataView(out.buffer);
  const [blockBytes, dAt] = t.type === GGML_TYPES.q4_k ? [144, 0] : t.type === GGML_TYPES.q4_0 ? [18, 0] : [210, 208];
  for (let b = 0; b < out.length; b += blockBytes) {
    view.setUint16(b + dAt, 0x1400, true); // d = 2^-10
    if (t.type === GGML_TYPES.q4_k) view.setUint16(b + 2, 0x1400, true); // dmin
  }
  return out;
}

/**
 * Writes the model to `path` (parent folders created). With `headerOnly` only the header
 * (metadata and tensor table) is written: what a test of the shape needs, without the data.
 * With `vocabOnly` no tensors at all, as llama.cpp's own vocabulary files: what a test of the
 * tokenizer loads (llama.cpp's vocab_only), in a second instead of a gigabyte.
 */
export function writeGguf(path: string, options: { shape?: keyof typeof GGUF_SHAPES; seed?: number; headerOnly?: boolean; vocabOnly?: boolean } = {}): void {
  const rand = random(options.seed ?? 1);
  const shape: GgufShape = GGUF_SHAPES[options.shape ?? "tiny"];
  const vocab = vocabulary(shape.vocabSize);
  const tensors = options.vocabOnly ? [] : ggufTensors(shape, vocab.tokens.length);
  const meta = metadata(shape, vocab);
  const w = new Writer();
  w.u32(0x46554747); // "GGUF"
  w.u32(3);
  w.u64(tensors.length);
  w.u64(meta.length);
  for (const [key, v] of meta) {
    w.string(key);
    w.value(v);
  }
  let offset = 0;
  for (const t of tensors) {
    w.string(t.name);
    w.u32(t.ne.length);
    for (const d of t.ne) w.u64(d);
    w.u32(t.type);
    w.u64(offset);
    offset +=
      Math.ceil(
        tensorBytes(
          t.type,
          t.ne.reduce((a, b) => a * b, 1),
        ) / ALIGNMENT,
      ) * ALIGNMENT;
  }
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, "w");
  try {
    if (options.headerOnly) return void writeSync(fd, w.result());
    w.pad();
    writeSync(fd, w.result());
    let tile: Uint32Array | null = null;
    const pool = () => (tile ??= Uint32Array.from({ length: 1 << 20 }, () => (rand() * 2 ** 32) >>> 0));
    for (const t of tensors) {
      const data = tensorData(t, rand, pool);
      writeSync(fd, data);
      const rest = (ALIGNMENT - (data.byteLength % ALIGNMENT)) % ALIGNMENT;
      if (rest) writeSync(fd, new Uint8Array(rest));
    }
  } finally {
    closeSync(fd);
  }
}

/** Writes the tiny test model to `path`. */
export function writeTinyGguf(path: string, seed = 1): void {
  writeGguf(path, { seed });
}

if (import.meta.main) {
  const [path = "model.gguf", shape = "tiny"] = process.argv.slice(2).filter((a) => !a.startsWith("--"));
  writeGguf(path, { shape: shape as keyof typeof GGUF_SHAPES, headerOnly: process.argv.includes("--header-only") });
  console.log(`wrote ${path}`);
}

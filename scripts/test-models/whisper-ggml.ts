import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { GGML_TYPES, WHISPER_FILE_TYPES, type WhisperFileType, type WhisperHparams, tensorBytes } from "../../src/model-files/ggml-header";
import { random } from "./random";

/**
 * Writes random-weight whisper.cpp models in the legacy ggml format (the format of the
 * ggml-*.bin files operators download): the tiny one tests load (width 32, one layer,
 * about 4 MB), and stand-ins with the exact hyper-parameters and tensor types of base.en
 * and small in f16, q8_0 and q5_1 for benches (speed depends on shapes and types, not on
 * the weights' values). Random weights give random words.
 */

/** Vocabulary sizes: whisper.cpp infers the token layout (and whether it detects languages) from them. */
const N_VOCAB_ENGLISH = 51864;
const N_VOCAB_MULTILINGUAL = 51865;
/** large-v3's vocabulary: one more language token (Cantonese) than the earlier multilingual ones. */
const N_VOCAB_V3 = 51866;
/** Fixed by the 30 s window and the conv stride, and by the decoder's context; the same in every published model. */
const FIXED = { n_audio_ctx: 1500, n_text_ctx: 448, n_mels: 80 };
const N_FFT = 201;

/** Published shapes (OpenAI's model card dimensions, as whisper.cpp's files state them). */
export const WHISPER_SHAPES = {
  tiny: { n_vocab: N_VOCAB_ENGLISH, ...FIXED, n_audio_state: 32, n_audio_head: 2, n_audio_layer: 1, n_text_state: 32, n_text_head: 2, n_text_layer: 1 },
  "base.en": { n_vocab: N_VOCAB_ENGLISH, ...FIXED, n_audio_state: 512, n_audio_head: 8, n_audio_layer: 6, n_text_state: 512, n_text_head: 8, n_text_layer: 6 },
  small: {
    n_vocab: N_VOCAB_MULTILINGUAL,
    ...FIXED,
    n_audio_state: 768,
    n_audio_head: 12,
    n_audio_layer: 12,
    n_text_state: 768,
    n_text_head: 12,
    n_text_layer: 12,
  },
  /** Only for the bench's Parakeet comparison (issue 28): 32 encoder layers, 4 decoder layers, 128 mel bands. */
  "large-v3-turbo": {
    n_vocab: N_VOCAB_V3,
    ...FIXED,
    n_mels: 128,
    n_audio_state: 1280,
    n_audio_head: 20,
    n_audio_layer: 32,
    n_text_state: 1280,
    n_text_head: 20,
    n_text_layer: 4,
  },
} satisfies Record<string, WhisperHparams>;

/** Tensor data types by name: ggml_type ids, as whisper.cpp's loader checks them. */
type Tensor = { name: string; ne: number[]; type: number };

/**
 * The tensors of a model, in the order OpenAI's state dict (and so convert-pt-to-ggml.py)
 * lists them. Conversion writes matrices f16 and vectors, conv biases and positional
 * embeddings f32; whisper.cpp's quantize then turns every 2-D tensor but the positional
 * embeddings and conv biases into the target type (conv weights are 3-D: they stay f16).
 */
export function whisperTensors(shape: WhisperHparams, fileType: WhisperFileType = "f16"): Tensor[] {
  const matrixType = GGML_TYPES[WHISPER_FILE_TYPES[fileType].tensors];
  const f32 = GGML_TYPES.f32;
  const f16 = GGML_TYPES.f16;
  const mat = (name: string, ne: number[]): Tensor => ({ name, ne, type: matrixType });
  const vec = (name: string, ne: number[]): Tensor => ({ name, ne, type: f32 });
  const block = (p: string, n: number, cross: boolean): Tensor[] => {
    const attn = (a: string): Tensor[] => [
      mat(`${a}.query.weight`, [n, n]),
      vec(`${a}.query.bias`, [n]),
      mat(`${a}.key.weight`, [n, n]),
      mat(`${a}.value.weight`, [n, n]),
      vec(`${a}.value.bias`, [n]),
      mat(`${a}.out.weight`, [n, n]),
      vec(`${a}.out.bias`, [n]),
    ];
    return [
      ...attn(`${p}.attn`),
      vec(`${p}.attn_ln.weight`, [n]),
      vec(`${p}.attn_ln.bias`, [n]),
      ...(cross ? [...attn(`${p}.cross_attn`), vec(`${p}.cross_attn_ln.weight`, [n]), vec(`${p}.cross_attn_ln.bias`, [n])] : []),
      mat(`${p}.mlp.0.weight`, [n, 4 * n]),
      vec(`${p}.mlp.0.bias`, [4 * n]),
      mat(`${p}.mlp.2.weight`, [4 * n, n]),
      vec(`${p}.mlp.2.bias`, [n]),
      vec(`${p}.mlp_ln.weight`, [n]),
      vec(`${p}.mlp_ln.bias`, [n]),
    ];
  };
  const a = shape.n_audio_state;
  const t = shape.n_text_state;
  const layers = (count: number, make: (i: number) => Tensor[]) => Array.from({ length: count }, (_, i) => make(i)).flat();
  return [
    vec("encoder.positional_embedding", [a, shape.n_audio_ctx]),
    { name: "encoder.conv1.weight", ne: [3, shape.n_mels, a], type: f16 },
    vec("encoder.conv1.bias", [1, a]),
    { name: "encoder.conv2.weight", ne: [3, a, a], type: f16 },
    vec("encoder.conv2.bias", [1, a]),
    ...layers(shape.n_audio_layer, (i) => block(`encoder.blocks.${i}`, a, false)),
    vec("encoder.ln_post.weight", [a]),
    vec("encoder.ln_post.bias", [a]),
    vec("decoder.positional_embedding", [t, shape.n_text_ctx]),
    mat("decoder.token_embedding.weight", [t, shape.n_vocab]),
    ...layers(shape.n_text_layer, (i) => block(`decoder.blocks.${i}`, t, true)),
    vec("decoder.ln.weight", [t]),
    vec("decoder.ln.bias", [t]),
  ];
}

const scratch = new Float32Array(1);
const scratchBits = new Uint32Array(scratch.buffer);
export function toHalf(value: number): number {
  scratch[0] = value;
  const x = scratchBits[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = ((x >>> 23) & 0xff) - 127 + 15;
  const mant = (x >>> 13) & 0x3ff;
  if (exp <= 0) return sign; // flush tiny values to zero
  if (exp >= 31) return sign | 0x7bff;
  return sign | (exp << 10) | mant;
}

/**
 * One tensor's bytes. Layer-norm weights at 1 keep activations in range; everything else
 * small noise. Quantized blocks get a small scale (their first half, and for q5_1 a matching
 * minimum) and random quants.
 */
function tensorData(t: Tensor, rand: () => number): Uint8Array {
  const count = t.ne.reduce((a, b) => a * b, 1);
  const base = t.name.endsWith("ln.weight") || t.name.endsWith("ln_post.weight") ? 1 : 0;
  const value = () => base + (rand() - 0.5) * 0.2;
  if (t.type === GGML_TYPES.f32) return new Uint8Array(Float32Array.from({ length: count }, value).buffer);
  if (t.type === GGML_TYPES.f16) {
    const out = new Uint16Array(count);
    for (let i = 0; i < count; i++) out[i] = toHalf(value());
    return new Uint8Array(out.buffer);
  }
  const out = new Uint8Array(tensorBytes(t.type, count));
  const words = new Uint32Array(out.buffer, 0, out.length >>> 2);
  for (let i = 0; i < words.length; i++) words[i] = (rand() * 2 ** 32) >>> 0;
  const view = new DataView(out.buffer);
  const blockBytes = t.type === GGML_TYPES.q8_0 ? 34 : 24;
  for (let b = 0; b < out.length; b += blockBytes) {
    view.setUint16(b, toHalf(0.1 / 16), true); // d
    if (t.type === GGML_TYPES.q5_1) view.setUint16(b + 2, toHalf(-0.1), true); // m: centres the 0..31 quants
  }
  return out;
}

export type WhisperModelOptions = {
  seed?: number;
  /** The published model whose hyper-parameters to copy; default the tiny test shape. */
  shape?: keyof typeof WHISPER_SHAPES;
  /** Tensor types as in whisper.cpp's published files. */
  fileType?: WhisperFileType;
  /** A multilingual vocabulary (language tokens, detection), like ggml-base.bin rather than ggml-base.en.bin. */
  multilingual?: boolean;
  /**
   * For benches: stop decoding each 30 s window after this many tokens. whisper.cpp decodes
   * at most n_text_ctx / 2 - 4 tokens a window, so this sets n_text_ctx (448 published,
   * 220 tokens) and nothing else: random weights never end a window on their own, where a
   * real model ends it after what was said (about 100 tokens of conversation).
   */
  tokensPerWindow?: number;
};

/** Writes the model to `path` (parent folders created): hparams, mel filters, vocabulary, then each tensor, streamed. */
export function writeWhisperModel(path: string, options: WhisperModelOptions = {}): void {
  const rand = random(options.seed ?? 1);
  const shape: WhisperHparams = { ...WHISPER_SHAPES[options.shape ?? "tiny"] };
  if (options.multilingual) shape.n_vocab = N_VOCAB_MULTILINGUAL;
  if (options.tokensPerWindow) shape.n_text_ctx = 2 * (options.tokensPerWindow + 4);
  const fileType = options.fileType ?? "f16";
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, "w");
  const bytes = (b: Uint8Array) => writeSync(fd, b);
  const i32 = (...values: number[]) => bytes(new Uint8Array(new Int32Array(values).buffer));
  try {
    i32(0x67676d6c); // "ggml"
    const h = shape;
    i32(
      h.n_vocab,
      h.n_audio_ctx,
      h.n_audio_state,
      h.n_audio_head,
      h.n_audio_layer,
      h.n_text_ctx,
      h.n_text_state,
      h.n_text_head,
      h.n_text_layer,
      h.n_mels,
      WHISPER_FILE_TYPES[fileType].header,
    );
    i32(h.n_mels, N_FFT);
    bytes(new Uint8Array(Float32Array.from({ length: h.n_mels * N_FFT }, () => rand() * 0.01).buffer));
    // The text tokens (ids below end-of-text: 50256, or 50257 in a multilingual vocabulary);
    // whisper.cpp names the special ones itself. Id 220 must be the single space: whisper.cpp
    // looks it up by value.
    const textTokens = h.n_vocab >= N_VOCAB_MULTILINGUAL ? 50257 : 50256;
    i32(textTokens);
    const enc = new TextEncoder();
    for (let id = 0; id < textTokens; id++) {
      const word = enc.encode(id === 220 ? " " : ` w${id.toString(36)}`);
      i32(word.length);
      bytes(word);
    }
    for (const t of whisperTensors(shape, fileType)) {
      const name = enc.encode(t.name);
      i32(t.ne.length, name.length, t.type, ...t.ne);
      bytes(name);
      bytes(tensorData(t, rand));
    }
  } finally {
    closeSync(fd);
  }
}

/** Writes the tiny test model to `path`. */
export function writeTinyWhisperModel(path: string, options: Omit<WhisperModelOptions, "shape" | "fileType"> = {}): void {
  writeWhisperModel(path, options);
}

if (import.meta.main) {
  const [path = "whisper.bin", shape = "tiny", fileType = "f16"] = process.argv.slice(2).filter((a) => !a.startsWith("--"));
  writeWhisperModel(path, {
    shape: shape as keyof typeof WHISPER_SHAPES,
    fileType: fileType as WhisperFileType,
    multilingual: process.argv.includes("--multilingual"),
  });
  console.log(`wrote ${path}`);
}

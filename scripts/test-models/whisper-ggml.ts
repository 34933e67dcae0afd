import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Writes a tiny random-weight whisper.cpp model in the legacy ggml format (the format
 * of the ggml-*.bin files operators download). Random weights give random words; the
 * point is to run the real loading and inference code in tests and benches.
 */

/** Vocabulary sizes: whisper.cpp infers the token layout (and whether it detects languages) from them. */
const N_VOCAB_ENGLISH = 51864;
const N_VOCAB_MULTILINGUAL = 51865;
const N_STATE = 32;
const N_HEAD = 2;
const N_AUDIO_CTX = 1500; // fixed by the 30 s window and the conv stride
const N_TEXT_CTX = 448;
const N_MELS = 80;
const N_FFT = 201;
const FTYPE_F16 = 1;

/** Deterministic PRNG so a generated model is the same bytes every time (cacheable, reproducible). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function toHalf(value: number): number {
  const f = new Float32Array([value]);
  const x = new Uint32Array(f.buffer)[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = ((x >>> 23) & 0xff) - 127 + 15;
  const mant = (x >>> 13) & 0x3ff;
  if (exp <= 0) return sign; // flush tiny values to zero
  if (exp >= 31) return sign | 0x7bff;
  return sign | (exp << 10) | mant;
}

class Writer {
  private parts: Uint8Array[] = [];
  i32(...values: number[]) {
    this.parts.push(new Uint8Array(new Int32Array(values).buffer));
  }
  bytes(b: Uint8Array) {
    this.parts.push(b);
  }
  result(): Uint8Array {
    return Buffer.concat(this.parts);
  }
}

type Tensor = { name: string; ne: number[]; f16: boolean };

function tensors(nVocab: number): Tensor[] {
  const n = N_STATE;
  const mat = (name: string, ne: number[]): Tensor => ({ name, ne, f16: true });
  const vec = (name: string, ne: number[]): Tensor => ({ name, ne, f16: false });
  const attn = (p: string, withKeyBias = false): Tensor[] => [
    vec(`${p}_ln.weight`, [n]),
    vec(`${p}_ln.bias`, [n]),
    mat(`${p}.query.weight`, [n, n]),
    vec(`${p}.query.bias`, [n]),
    mat(`${p}.key.weight`, [n, n]),
    ...(withKeyBias ? [vec(`${p}.key.bias`, [n])] : []),
    mat(`${p}.value.weight`, [n, n]),
    vec(`${p}.value.bias`, [n]),
    mat(`${p}.out.weight`, [n, n]),
    vec(`${p}.out.bias`, [n]),
  ];
  const mlp = (p: string): Tensor[] => [
    vec(`${p}.mlp_ln.weight`, [n]),
    vec(`${p}.mlp_ln.bias`, [n]),
    mat(`${p}.mlp.0.weight`, [n, 4 * n]),
    vec(`${p}.mlp.0.bias`, [4 * n]),
    mat(`${p}.mlp.2.weight`, [4 * n, n]),
    vec(`${p}.mlp.2.bias`, [n]),
  ];
  const block = (p: string, cross: boolean): Tensor[] => [...mlp(p), ...attn(`${p}.attn`), ...(cross ? attn(`${p}.cross_attn`) : [])];
  return [
    vec("encoder.positional_embedding", [n, N_AUDIO_CTX]),
    mat("encoder.conv1.weight", [3, N_MELS, n]),
    vec("encoder.conv1.bias", [1, n]),
    mat("encoder.conv2.weight", [3, n, n]),
    vec("encoder.conv2.bias", [1, n]),
    vec("encoder.ln_post.weight", [n]),
    vec("encoder.ln_post.bias", [n]),
    ...block("encoder.blocks.0", false),
    vec("decoder.positional_embedding", [n, N_TEXT_CTX]),
    mat("decoder.token_embedding.weight", [n, nVocab]),
    vec("decoder.ln.weight", [n]),
    vec("decoder.ln.bias", [n]),
    ...block("decoder.blocks.0", true),
  ];
}

function tensorData(t: Tensor, rand: () => number): Uint8Array {
  const count = t.ne.reduce((a, b) => a * b, 1);
  // Layer-norm weights at 1 keep activations in range; everything else small noise.
  const base = t.name.endsWith("ln.weight") || t.name.endsWith("ln_post.weight") ? 1 : 0;
  const value = () => base + (rand() - 0.5) * 0.2;
  if (t.f16) {
    const out = new Uint16Array(count);
    for (let i = 0; i < count; i++) out[i] = toHalf(value());
    return new Uint8Array(out.buffer);
  }
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) out[i] = value();
  return new Uint8Array(out.buffer);
}

export type TinyWhisperOptions = {
  seed?: number;
  /** A multilingual vocabulary (language tokens, detection), like ggml-base.bin rather than ggml-base.en.bin. */
  multilingual?: boolean;
};

/** The model's bytes: hparams, mel filters, vocabulary, tensors (about 4 MB). */
export function tinyWhisperModel(options: TinyWhisperOptions = {}): Uint8Array {
  const rand = random(options.seed ?? 1);
  const nVocab = options.multilingual ? N_VOCAB_MULTILINGUAL : N_VOCAB_ENGLISH;
  const w = new Writer();
  w.i32(0x67676d6c); // "ggml"
  w.i32(nVocab, N_AUDIO_CTX, N_STATE, N_HEAD, 1, N_TEXT_CTX, N_STATE, N_HEAD, 1, N_MELS, FTYPE_F16);
  w.i32(N_MELS, N_FFT);
  const filters = new Float32Array(N_MELS * N_FFT);
  for (let i = 0; i < filters.length; i++) filters[i] = rand() * 0.01;
  w.bytes(new Uint8Array(filters.buffer));
  // The text tokens (ids below end-of-text: 50256, or 50257 in a multilingual vocabulary);
  // whisper.cpp names the special ones itself. Id 220 must be the single space: whisper.cpp
  // looks it up by value.
  const textTokens = options.multilingual ? 50257 : 50256;
  w.i32(textTokens);
  const enc = new TextEncoder();
  for (let id = 0; id < textTokens; id++) {
    const word = enc.encode(id === 220 ? " " : ` w${id.toString(36)}`);
    w.i32(word.length);
    w.bytes(word);
  }
  for (const t of tensors(nVocab)) {
    const name = enc.encode(t.name);
    w.i32(t.ne.length, name.length, t.f16 ? 1 : 0, ...t.ne);
    w.bytes(name);
    w.bytes(tensorData(t, rand));
  }
  return w.result();
}

/** Writes the tiny model to `path` (parent folders created). */
export function writeTinyWhisperModel(path: string, options: TinyWhisperOptions = {}): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, tinyWhisperModel(options));
}

if (import.meta.main) {
  const path = process.argv[2] ?? "tiny-whisper.bin";
  writeTinyWhisperModel(path, { multilingual: process.argv.includes("--multilingual") });
  console.log(`wrote ${path}`);
}

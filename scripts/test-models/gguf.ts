import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Writes a tiny random-weight llama-architecture GGUF (a few hundred KB) with a small
 * SentencePiece-style vocabulary: byte-fallback tokens cover any text, so JSON-schema
 * grammars can always be satisfied. Random weights give random text; tests assert plumbing.
 */

const N_EMBD = 64;
const N_HEAD = 2;
const N_FF = 128;
/**
 * The context window. Its byte-level vocabulary makes everything long in tokens (a summary
 * prompt is ~900): at 2048 the longest answer the summary schemas allow could not fit
 * beside a prompt, and summaries of even a short transcript ran out of room.
 */
export const TINY_GGUF_CONTEXT = 4096;
const N_CTX = TINY_GGUF_CONTEXT;
const ALIGNMENT = 32;

enum T {
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  STRING = 8,
  ARRAY = 9,
}
type Value = { type: T.UINT32 | T.INT32 | T.FLOAT32; value: number } | { type: T.STRING; value: string } | { type: T.ARRAY; of: T.INT32 | T.FLOAT32 | T.STRING; values: (number | string)[] };

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

/** <unk> <s> </s>, the 256 byte tokens, then whole pieces with "▁" marking a word start. */
function vocabulary() {
  const tokens = ["<unk>", "<s>", "</s>"];
  const types = [2, 3, 3]; // unknown, control, control
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`);
    types.push(6); // byte
  }
  const pieces = ["▁", ..."abcdefghijklmnopqrstuvwxyz0123456789", "▁the", "▁a", "▁and", "▁of", "▁to", "▁is", "▁summary", "▁meeting", '{"', '":', '",', '"}', "▁true", "▁false"];
  for (const p of pieces) {
    tokens.push(p);
    types.push(1); // normal
  }
  const scores = tokens.map((_, i) => (types[i] === 1 ? -i : 0));
  return { tokens, types, scores };
}

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** The model's bytes. */
export function tinyGguf(seed = 1): Uint8Array {
  const rand = random(seed);
  const vocab = vocabulary();
  const nVocab = vocab.tokens.length;
  const headDim = N_EMBD / N_HEAD;
  const meta: [string, Value][] = [
    ["general.architecture", { type: T.STRING, value: "llama" }],
    ["general.name", { type: T.STRING, value: "parley-tiny-test" }],
    ["general.file_type", { type: T.UINT32, value: 0 }],
    ["llama.context_length", { type: T.UINT32, value: N_CTX }],
    ["llama.embedding_length", { type: T.UINT32, value: N_EMBD }],
    ["llama.block_count", { type: T.UINT32, value: 1 }],
    ["llama.feed_forward_length", { type: T.UINT32, value: N_FF }],
    ["llama.attention.head_count", { type: T.UINT32, value: N_HEAD }],
    ["llama.attention.head_count_kv", { type: T.UINT32, value: N_HEAD }],
    ["llama.rope.dimension_count", { type: T.UINT32, value: headDim }],
    ["llama.attention.layer_norm_rms_epsilon", { type: T.FLOAT32, value: 1e-5 }],
    ["tokenizer.ggml.model", { type: T.STRING, value: "llama" }],
    ["tokenizer.ggml.tokens", { type: T.ARRAY, of: T.STRING, values: vocab.tokens }],
    ["tokenizer.ggml.scores", { type: T.ARRAY, of: T.FLOAT32, values: vocab.scores }],
    ["tokenizer.ggml.token_type", { type: T.ARRAY, of: T.INT32, values: vocab.types }],
    ["tokenizer.ggml.unknown_token_id", { type: T.UINT32, value: 0 }],
    ["tokenizer.ggml.bos_token_id", { type: T.UINT32, value: 1 }],
    ["tokenizer.ggml.eos_token_id", { type: T.UINT32, value: 2 }],
  ];
  const tensors: [string, number[]][] = [
    ["token_embd.weight", [N_EMBD, nVocab]],
    ["output_norm.weight", [N_EMBD]],
    ["output.weight", [N_EMBD, nVocab]],
    ["blk.0.attn_norm.weight", [N_EMBD]],
    ["blk.0.attn_q.weight", [N_EMBD, N_EMBD]],
    ["blk.0.attn_k.weight", [N_EMBD, N_EMBD]],
    ["blk.0.attn_v.weight", [N_EMBD, N_EMBD]],
    ["blk.0.attn_output.weight", [N_EMBD, N_EMBD]],
    ["blk.0.ffn_norm.weight", [N_EMBD]],
    ["blk.0.ffn_gate.weight", [N_EMBD, N_FF]],
    ["blk.0.ffn_up.weight", [N_EMBD, N_FF]],
    ["blk.0.ffn_down.weight", [N_FF, N_EMBD]],
  ];
  const w = new Writer();
  w.u32(0x46554747); // "GGUF"
  w.u32(3);
  w.u64(tensors.length);
  w.u64(meta.length);
  for (const [key, v] of meta) {
    w.string(key);
    w.value(v);
  }
  const data: Float32Array[] = [];
  let offset = 0;
  for (const [name, ne] of tensors) {
    const count = ne.reduce((a, b) => a * b, 1);
    // Norm weights at 1 keep activations in range; everything else small noise.
    const values = new Float32Array(count).map(() => (name.endsWith("norm.weight") ? 1 : (rand() - 0.5) * 0.2));
    w.string(name);
    w.u32(ne.length);
    for (const d of ne) w.u64(d);
    w.u32(0); // F32
    w.u64(offset);
    data.push(values);
    offset += Math.ceil(values.byteLength / ALIGNMENT) * ALIGNMENT;
  }
  w.pad();
  for (const values of data) {
    w.push(new Uint8Array(values.buffer));
    w.pad();
  }
  return w.result();
}

/** Writes the tiny model to `path` (parent folders created). */
export function writeTinyGguf(path: string, seed = 1): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, tinyGguf(seed));
}

if (import.meta.main) {
  const path = process.argv[2] ?? "tiny.gguf";
  writeTinyGguf(path);
  console.log(`wrote ${path}`);
}

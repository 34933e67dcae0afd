import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onnx } from "onnx-proto";

/**
 * Writes a tiny random-weight feature-extraction model in the layout transformers.js
 * reads offline (config.json, tokenizer.json, tokenizer_config.json, onnx/model.onnx;
 * about 20 KB): a BERT-style WordPiece tokenizer over a small vocabulary and a graph
 * last_hidden_state = tanh(embedding[input_ids] x W) * attention_mask. Random weights
 * give meaningless but deterministic vectors; tests assert plumbing, never relevance.
 */

export const TINY_EMBEDDER_DIMENSION = 32;

const SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
const WORDS = (
  "the a an and or of to in on at for with is are was were be it this that we you they i he she my your our " +
  "budget marketing quarter plan meeting doctor blood pressure hiking mountain water boots launch date vendor price call " +
  "what when where who why how yes no not good bad new next last time day week month year money team project"
).split(" ");
const SUFFIXES = ["##s", "##ed", "##ing", "##er", "##ly"];
const LETTERS = [..."abcdefghijklmnopqrstuvwxyz0123456789"].flatMap((c) => [c, `##${c}`]);

/** Same PRNG idea as the other generators: the same seed gives the same bytes. */
export function random(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return ((s >>> 0) / 0xffffffff) * 2 - 1;
  };
}

export function floatTensor(name: string, dims: number[], next: () => number): onnx.ITensorProto {
  const count = dims.reduce((a, b) => a * b, 1);
  const data = new Float32Array(count).map(() => next() * 0.5);
  return { name, dims, dataType: onnx.TensorProto.DataType.FLOAT, rawData: new Uint8Array(data.buffer) };
}

function valueInfo(name: string, elemType: number, shape: (string | number)[]): onnx.IValueInfoProto {
  return {
    name,
    type: { tensorType: { elemType, shape: { dim: shape.map((d) => (typeof d === "string" ? { dimParam: d } : { dimValue: d })) } } },
  };
}

export function tinyEmbedderFiles(seed = 1): Record<string, string | Uint8Array> {
  const vocabList = [...SPECIAL, ...WORDS, ...SUFFIXES, ...LETTERS];
  const vocab = Object.fromEntries(vocabList.map((t, i) => [t, i]));
  const next = random(seed);
  const H = TINY_EMBEDDER_DIMENSION;
  const { FLOAT, INT64 } = onnx.TensorProto.DataType;
  const graph: onnx.IGraphProto = {
    name: "tiny-embedder",
    initializer: [
      floatTensor("embeddings", [vocabList.length, H], next),
      floatTensor("dense", [H, H], next),
      { name: "axes", dims: [1], dataType: INT64, int64Data: [-1] },
    ],
    node: [
      {
        opType: "Gather",
        input: ["embeddings", "input_ids"],
        output: ["tokens"],
        attribute: [{ name: "axis", type: onnx.AttributeProto.AttributeType.INT, i: 0 }],
      },
      { opType: "MatMul", input: ["tokens", "dense"], output: ["projected"] },
      { opType: "Tanh", input: ["projected"], output: ["activated"] },
      { opType: "Cast", input: ["attention_mask"], output: ["mask_float"], attribute: [{ name: "to", type: onnx.AttributeProto.AttributeType.INT, i: FLOAT }] },
      { opType: "Unsqueeze", input: ["mask_float", "axes"], output: ["mask"] },
      { opType: "Mul", input: ["activated", "mask"], output: ["last_hidden_state"] },
    ],
    input: [valueInfo("input_ids", INT64, ["batch", "sequence"]), valueInfo("attention_mask", INT64, ["batch", "sequence"])],
    output: [valueInfo("last_hidden_state", FLOAT, ["batch", "sequence", H])],
  };
  const model = onnx.ModelProto.encode({ irVersion: 8, opsetImport: [{ domain: "", version: 17 }], producerName: "parley-test-models", graph }).finish();

  const special = (token: string) => ({ id: token, ids: [vocab[token]], tokens: [token] });
  const tokenizer = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map((content) => ({
      id: vocab[content],
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: {
      type: "TemplateProcessing",
      single: [{ SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "[SEP]", type_id: 0 } }],
      pair: [
        { SpecialToken: { id: "[CLS]", type_id: 0 } },
        { Sequence: { id: "A", type_id: 0 } },
        { SpecialToken: { id: "[SEP]", type_id: 0 } },
        { Sequence: { id: "B", type_id: 1 } },
        { SpecialToken: { id: "[SEP]", type_id: 1 } },
      ],
      special_tokens: { "[CLS]": special("[CLS]"), "[SEP]": special("[SEP]") },
    },
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100, vocab },
  };
  const tokenizerConfig = {
    tokenizer_class: "BertTokenizer",
    do_lower_case: true,
    model_max_length: 512,
    cls_token: "[CLS]",
    sep_token: "[SEP]",
    pad_token: "[PAD]",
    unk_token: "[UNK]",
    mask_token: "[MASK]",
  };
  const config = {
    model_type: "bert",
    architectures: ["BertModel"],
    hidden_size: H,
    vocab_size: vocabList.length,
    max_position_embeddings: 512,
    num_attention_heads: 1,
    num_hidden_layers: 1,
  };
  return {
    "config.json": JSON.stringify(config, null, 2),
    "tokenizer.json": JSON.stringify(tokenizer),
    "tokenizer_config.json": JSON.stringify(tokenizerConfig, null, 2),
    "onnx/model.onnx": model,
  };
}

/** Writes the model's files under dir (the folder transformers.js resolves the model name to). */
export function writeTinyEmbedder(dir: string, seed = 1): void {
  for (const [name, content] of Object.entries(tinyEmbedderFiles(seed))) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
}

/**
 * A models folder holding the tiny embedder under `name`, generated once per OS temp dir
 * and reused by later test runs (the bytes are deterministic). Returns the models folder.
 */
export function cachedTinyEmbedder(name = "tiny-embedder", seed = 1): string {
  const root = join(tmpdir(), `parley-test-models-onnx-${name}-${seed}`);
  if (!existsSync(join(root, name, "onnx", "model.onnx"))) {
    const staging = `${root}.${process.pid}.tmp`;
    writeTinyEmbedder(join(staging, name), seed);
    try {
      renameSync(staging, root);
    } catch {
      // Another test process won the race; its copy is identical.
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return root;
}

if (import.meta.main) {
  const dir = process.argv[2] ?? "models/tiny-embedder";
  writeTinyEmbedder(dir);
  console.log(`wrote a tiny ONNX feature-extraction model to ${dir}`);
}

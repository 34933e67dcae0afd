import { join } from "node:path";
import { describe, expect, test } from "bun:test";
import { GgmlType, readGgufFileInfo } from "node-llama-cpp";
import { ensureShapedWhisperModel, ensureTestModels } from "../../scripts/test-models/cache";
import { writeGguf } from "../../scripts/test-models/gguf";
import { WHISPER_SHAPES, whisperTensors } from "../../scripts/test-models/whisper-ggml";
import { readWhisperHeader, type WhisperFileType } from "../../src/model-files/ggml-header";
import { defaultManifest, findModel } from "../../src/model-files/manifest";
import { makeTempDir } from "../helpers";

/**
 * The benches measure speed on random-weight stand-ins of the published models; speed
 * depends on shapes and types only, so those must be exactly the published ones. Full files
 * are read for base.en q8_0 and q5_1 (82 and 60 MB, generated once and cached, a few seconds
 * the first time); for the others (f16 files up to 488 MB) the generator's tensor plan is
 * checked, which is what the writer writes (the full reads prove that).
 */

const published = (name: string) => findModel(defaultManifest, name).parameters!;
const generatorShape = (name: string) => (name.startsWith("whisper-base") ? WHISPER_SHAPES["base.en"] : WHISPER_SHAPES.small);

describe("whisper stand-ins have the published shapes and types", () => {
  const cases: [manifestName: string, fileType: WhisperFileType][] = [
    ["whisper-base.en", "f16"],
    ["whisper-base.en-q8_0", "q8_0"],
    ["whisper-base.en-q5_1", "q5_1"],
    ["whisper-small", "f16"],
    ["whisper-small-q8_0", "q8_0"],
    ["whisper-small-q5_1", "q5_1"],
  ];

  test.each(cases)("%s: the generator's hyper-parameters and tensor types are the manifest's", (name, fileType) => {
    const p = published(name);
    expect(p.file_type).toBe(fileType);
    expect(generatorShape(name)).toEqual(p.hparams as typeof WHISPER_SHAPES.small);
    const tensors = whisperTensors(generatorShape(name), fileType);
    const h = p.hparams as Record<string, number>;
    // 15 tensors per encoder block, 24 per decoder block (with cross-attention), 11 others.
    expect(tensors.length).toBe(15 * h.n_audio_layer! + 24 * h.n_text_layer! + 11);
    const typeOf = (n: string) => tensors.find((t) => t.name === n)!.type;
    expect(typeOf("decoder.token_embedding.weight")).toBe(typeOf("encoder.blocks.0.mlp.0.weight"));
    expect(tensors.find((t) => t.name === "decoder.token_embedding.weight")!.ne).toEqual([h.n_text_state!, h.n_vocab!]);
  });

  test.each([
    ["whisper-base.en-q8_0", "q8_0"],
    ["whisper-base.en-q5_1", "q5_1"],
  ] as const)("%s: the generated file's header and tensor table", (name, fileType) => {
    const file = readWhisperHeader(ensureShapedWhisperModel("base.en", fileType), { tensors: true });
    expect(file.fileType).toBe(fileType);
    expect(file.hparams).toEqual(published(name).hparams as typeof file.hparams);
    const type = (n: string) => file.tensors.find((t) => t.name === n)?.type;
    // whisper.cpp's quantize: every 2-D tensor but the positional embeddings and conv biases; conv weights are 3-D and stay f16.
    expect(type("encoder.blocks.5.attn.query.weight")).toBe(fileType);
    expect(type("decoder.blocks.5.cross_attn.value.weight")).toBe(fileType);
    expect(type("decoder.token_embedding.weight")).toBe(fileType);
    expect(type("encoder.conv1.weight")).toBe("f16");
    expect(type("encoder.conv2.bias")).toBe("f32");
    expect(type("encoder.positional_embedding")).toBe("f32");
    expect(type("decoder.blocks.0.mlp_ln.weight")).toBe("f32");
    expect(file.tensors.map((t) => t.name)).toEqual(whisperTensors(WHISPER_SHAPES["base.en"], fileType).map((t) => t.name));
  });

  test("the tiny test model reads back as written", () => {
    const file = readWhisperHeader(ensureTestModels().whisper, { tensors: true });
    expect(file).toMatchObject({ fileType: "f16", hparams: { n_audio_state: 32, n_audio_layer: 1, n_vocab: 51864 } });
    expect(file.tensors.length).toBe(15 + 24 + 11);
  });
});

test("the GGUF stand-in has the default LLM's published shape and Q4_K_M's tensor types", async () => {
  const path = join(makeTempDir(), "header.gguf");
  writeGguf(path, { shape: "qwen2.5-1.5b-q4_k_m", headerOnly: true }); // the header alone: the data is 1 GB
  const info = await readGgufFileInfo(path, { logWarnings: false });
  const p = published("qwen2.5-1.5b-instruct-q4");
  const meta = info.metadata as unknown as Record<string, any>;
  const arch = meta.general.architecture;
  expect(arch).toBe(p.architecture);
  expect(meta.general.file_type).toBe(15); // LLAMA_FTYPE_MOSTLY_Q4_K_M
  expect(p.file_type).toBe("Q4_K_M");
  for (const key of ["context_length", "embedding_length", "block_count", "feed_forward_length", "attention.head_count", "attention.head_count_kv"]) {
    const value = key.split(".").reduce((o, k) => o?.[k], meta[arch]);
    expect([key, value]).toEqual([key, p[key]]);
  }
  expect(meta.tokenizer.ggml.tokens.length).toBe(p.vocab_size);
  const tensors = info.fullTensorInfo ?? info.tensorInfo!;
  const type = (name: string) => tensors.find((t) => t.name === name)?.ggmlType;
  expect(tensors.find((t) => t.name === "token_embd.weight")!.dimensions.map(Number)).toEqual([1536, 151936]);
  expect(type("output.weight")).toBeUndefined(); // tied to the token embedding, which is then Q6_K
  expect(type("token_embd.weight")).toBe(GgmlType.Q6_K);
  expect(type("blk.3.attn_q.weight")).toBe(GgmlType.Q4_K);
  expect(type("blk.3.ffn_gate.weight")).toBe(GgmlType.Q4_K);
  // use_more_bits: the first and last eighth of the layers, and every third between.
  expect([0, 2, 3, 4, 5, 24, 27].map((i) => type(`blk.${i}.ffn_down.weight`))).toEqual([
    GgmlType.Q6_K,
    GgmlType.Q6_K,
    GgmlType.Q4_K,
    GgmlType.Q4_K,
    GgmlType.Q6_K,
    GgmlType.Q6_K,
    GgmlType.Q6_K,
  ]);
  expect(type("blk.5.attn_v.weight")).toBe(GgmlType.Q6_K);
  expect(type("blk.0.attn_q.bias")).toBe(GgmlType.F32);
  expect(tensors.length).toBe(2 + 28 * 12);
});

test("the Q4_0 GGUF stand-in has the published Q4_0 file's shape and types (decision 233)", async () => {
  const path = join(makeTempDir(), "header-q4_0.gguf");
  writeGguf(path, { shape: "qwen2.5-1.5b-q4_0", headerOnly: true });
  const info = await readGgufFileInfo(path, { logWarnings: false });
  const p = published("qwen2.5-1.5b-instruct-q4_0");
  const meta = info.metadata as unknown as Record<string, any>;
  expect(meta.general.file_type).toBe(2); // LLAMA_FTYPE_MOSTLY_Q4_0
  expect(p.file_type).toBe("Q4_0");
  for (const key of ["embedding_length", "block_count", "feed_forward_length", "attention.head_count_kv"])
    expect([key, key.split(".").reduce((o, k) => o?.[k], meta.qwen2)]).toEqual([key, p[key]]);
  const tensors = info.fullTensorInfo ?? info.tensorInfo!;
  const type = (name: string) => tensors.find((t) => t.name === name)?.ggmlType;
  expect(type("token_embd.weight")).toBe(GgmlType.Q6_K); // the tied output layer, as llama.cpp's quantize keeps it
  // No use_more_bits: that is the K-quant mixes' rule.
  expect([0, 3, 27].map((i) => type(`blk.${i}.ffn_down.weight`))).toEqual([GgmlType.Q4_0, GgmlType.Q4_0, GgmlType.Q4_0]);
  expect(type("blk.5.attn_v.weight")).toBe(GgmlType.Q4_0);
});

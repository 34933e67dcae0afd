import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onnx } from "onnx-proto";
import { floatTensor, random } from "./onnx-embedder";

/**
 * Tiny random-weight stand-ins for the neural diarizer's two models, with their real
 * input and output shapes (a few KB each): segmentation, pyannote-style, input_values
 * [batch, 1, samples] -> logits [batch, frames, 7] (a strided convolution, one frame per
 * 270 samples, then a projection to the 7 powerset classes); speaker embedding,
 * WeSpeaker-style, feats [batch, frames, 80] -> embs [batch, 16] (the mean over time,
 * projected). Meaningless but deterministic outputs: tests assert plumbing, not accuracy.
 */
export const TINY_SPEAKER_DIMENSION = 16;

const { FLOAT } = onnx.TensorProto.DataType;
const { INT, INTS } = onnx.AttributeProto.AttributeType;
const valueInfo = (name: string, shape: (string | number)[]): onnx.IValueInfoProto => ({
  name,
  type: { tensorType: { elemType: FLOAT, shape: { dim: shape.map((d) => (typeof d === "string" ? { dimParam: d } : { dimValue: d })) } } },
});
const encode = (graph: onnx.IGraphProto) =>
  onnx.ModelProto.encode({ irVersion: 8, opsetImport: [{ domain: "", version: 17 }], producerName: "parley-test-models", graph }).finish();

export function tinySegmentationModel(seed = 1): Uint8Array {
  const next = random(seed);
  return encode({
    name: "tiny-segmentation",
    initializer: [floatTensor("conv", [8, 1, 270], next), floatTensor("classes", [8, 7], next)],
    node: [
      {
        opType: "Conv",
        input: ["input_values", "conv"],
        output: ["framed"],
        attribute: [
          { name: "strides", type: INTS, ints: [270] },
          { name: "kernel_shape", type: INTS, ints: [270] },
        ],
      },
      { opType: "Transpose", input: ["framed"], output: ["frames"], attribute: [{ name: "perm", type: INTS, ints: [0, 2, 1] }] },
      { opType: "MatMul", input: ["frames", "classes"], output: ["logits"] },
    ],
    input: [valueInfo("input_values", ["batch", 1, "samples"])],
    output: [valueInfo("logits", ["batch", "frames", 7])],
  });
}

export function tinySpeakerEmbeddingModel(seed = 2): Uint8Array {
  const next = random(seed);
  return encode({
    name: "tiny-speaker-embedding",
    initializer: [floatTensor("projection", [80, TINY_SPEAKER_DIMENSION], next)],
    node: [
      {
        opType: "ReduceMean",
        input: ["feats"],
        output: ["pooled"],
        attribute: [
          { name: "axes", type: INTS, ints: [1] },
          { name: "keepdims", type: INT, i: 0 },
        ],
      },
      { opType: "MatMul", input: ["pooled", "projection"], output: ["embs"] },
    ],
    input: [valueInfo("feats", ["batch", "frames", 80])],
    output: [valueInfo("embs", ["batch", TINY_SPEAKER_DIMENSION])],
  });
}

/**
 * A models folder holding both tiny models at the manifest's paths for the default names
 * (pyannote-segmentation-3.0, wespeaker-resnet34), generated once per OS temp dir.
 */
export function cachedTinyDiarizationModels(): string {
  const root = join(tmpdir(), "parley-test-models-diarization-v1");
  const files: [string, Uint8Array][] = [
    ["pyannote-segmentation-3.0/model.onnx", tinySegmentationModel()],
    ["wespeaker-resnet34/voxceleb_resnet34_LM.onnx", tinySpeakerEmbeddingModel()],
  ];
  if (files.every(([path]) => existsSync(join(root, path)))) return root;
  const staging = `${root}.${process.pid}.tmp`;
  for (const [path, bytes] of files) {
    mkdirSync(join(staging, path, ".."), { recursive: true });
    writeFileSync(join(staging, path), bytes);
  }
  try {
    renameSync(staging, root);
  } catch {
    rmSync(staging, { recursive: true, force: true }); // another test file made it first
  }
  return root;
}

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { PARAKEET_SHAPES, parakeetTensors } from "../../scripts/test-models/parakeet-ggml";
import { tensorBytes } from "../../src/model-files/ggml-header";
import { defaultManifest, findModel } from "../../src/model-files/manifest";
import { type ParakeetFileType, readParakeetHeader } from "../../src/model-files/parakeet-header";

/**
 * The bench measures Parakeet's speed on a random-weight stand-in of parakeet-tdt-0.6b-v3,
 * so its shapes and types must be the published ones. There is no published file here to
 * read, so the check is against the sources that make and load them: whisper.cpp's
 * parakeet.cpp (its hyper-parameter defaults are the 0.6B model's, and its loader declares
 * every tensor's shape and type) and convert-parakeet-to-ggml.py (n_audio_ctx).
 */

const whisperCpp = join(dirname(require.resolve("nodejs-whisper/package.json")), "cpp", "whisper.cpp");
const source = readFileSync(join(whisperCpp, "src", "parakeet.cpp"), "utf8");
const arch = readFileSync(join(whisperCpp, "src", "parakeet-arch.h"), "utf8");
const converter = readFileSync(join(whisperCpp, "models", "convert-parakeet-to-ggml.py"), "utf8");

/** parakeet.cpp's `struct parakeet_hparams` defaults, with the converter's n_audio_ctx. */
function sourceHparams(): Record<string, number> {
  const struct = source.slice(source.indexOf("struct parakeet_hparams {"), source.indexOf("parakeet_arch arch"));
  const values = Object.fromEntries([...struct.matchAll(/int32_t\s+(\w+)\s*=\s*(\d+);/g)].map((m) => [m[1]!, Number(m[2])]));
  values.n_audio_ctx = Number(converter.match(/'n_audio_ctx':\s*(\d+)/)![1]);
  delete values.ftype;
  return values;
}

/** For each tensor name pattern, the type its loader declares: GGML_TYPE_F32, or wtype / pred_wtype / join_wtype (the file's). */
function loaderTypes(): { pattern: RegExp; declared: string }[] {
  const names = new Map([...arch.matchAll(/\{(PARAKEET_TENSOR_\w+),\s*"([^"]+)"\}/g)].map((m) => [m[1]!, m[2]!]));
  return [...source.matchAll(/create_tensor\((PARAKEET_TENSOR_\w+),\s*ggml_new_tensor_\dd\(ctx,\s*(\w+)/g)].map((m) => ({
    pattern: new RegExp(`^${names.get(m[1]!)!.replaceAll(".", "\\.").replace("%d", "\\d+")}$`),
    declared: m[2]!,
  }));
}

describe("the Parakeet stand-in has parakeet-tdt-0.6b-v3's published shape and types", () => {
  test("its hyper-parameters are parakeet.cpp's and the converter's, and the manifest's", () => {
    expect(PARAKEET_SHAPES["tdt-0.6b-v3"]).toEqual(sourceHparams() as typeof PARAKEET_SHAPES.tiny);
    for (const name of ["parakeet-tdt-0.6b-v3", "parakeet-tdt-0.6b-v3-q8_0", "parakeet-tdt-0.6b-v3-q4_0"]) {
      expect(findModel(defaultManifest, name).parameters!.hparams).toEqual(PARAKEET_SHAPES["tdt-0.6b-v3"]);
    }
  });

  test.each(["f16", "q8_0", "q4_0"] as ParakeetFileType[])("%s: every tensor has the type parakeet.cpp's loader declares for it", (fileType) => {
    expect(findModel(defaultManifest, fileType === "f16" ? "parakeet-tdt-0.6b-v3" : `parakeet-tdt-0.6b-v3-${fileType}`).parameters!.file_type).toBe(fileType);
    const h = PARAKEET_SHAPES["tdt-0.6b-v3"];
    const tensors = parakeetTensors(h, fileType);
    // pre-encode 12, 29 per encoder layer, embedding + 3 per LSTM layer, joint 6: the loader's count.
    expect(tensors.length).toBe(12 + 29 * h.n_audio_layer + 1 + 3 * h.n_pred_layers + 6);
    const declared = loaderTypes();
    const byType = { f32: 0, f16: 1, q4_0: 2, q8_0: 8 } as const;
    for (const t of tensors) {
      const rule = declared.find((d) => d.pattern.test(t.name));
      expect(rule, t.name).toBeDefined();
      if (rule!.declared === "GGML_TYPE_I32") continue; // the batch-norm counter: a 0-d tensor the converter writes as one f32
      // 640 (n_pred_dim) divides into q8_0's and q4_0's 32-element blocks: no f32 exception applies.
      const expected = rule!.declared === "GGML_TYPE_F32" ? byType.f32 : byType[fileType];
      expect([t.name, t.type]).toEqual([t.name, expected]);
    }
    expect(tensors.find((t) => t.name === "joint.joint_net.2.weight")!.ne).toEqual([h.n_pred_dim, h.n_vocab + h.n_tdt_durations + 1]);
    expect(tensors.find((t) => t.name === "encoder.pre_encode.out.weight")!.ne).toEqual([
      (h.n_mels / h.subsampling_factor) * h.n_subsampling_channels,
      h.n_audio_state,
    ]);
  });

  test("the published files' sizes differ exactly by what the stand-in's tensors do from one type to another", () => {
    // Decision 209: the manifest pins ggml-org's sizes. The tensor data is all that changes between
    // the f16, q8_0 and q4_0 files (header, filterbank and vocabulary are the same), so each pair of
    // published sizes checks the stand-in's choice of quantized and f32 tensors byte for byte.
    const h = PARAKEET_SHAPES["tdt-0.6b-v3"];
    const data = (fileType: ParakeetFileType) =>
      parakeetTensors(h, fileType).reduce(
        (sum, t) =>
          sum +
          tensorBytes(
            t.type,
            t.ne.reduce((a, b) => a * b, 1),
          ),
        0,
      );
    const published = (name: string) => findModel(defaultManifest, name).files[0]!.size!;
    const f16 = published("parakeet-tdt-0.6b-v3");
    expect(published("parakeet-tdt-0.6b-v3-q8_0") - f16).toBe(data("q8_0") - data("f16"));
    expect(published("parakeet-tdt-0.6b-v3-q4_0") - f16).toBe(data("q4_0") - data("f16"));
  });

  test("the tiny test model reads back as written, and is told apart from a whisper file", () => {
    const models = ensureTestModels();
    const file = readParakeetHeader(models.parakeet, { tensors: true });
    expect(file).toMatchObject({ fileType: "f16", hparams: PARAKEET_SHAPES.tiny });
    expect(file.tensors.map((t) => t.name)).toEqual(parakeetTensors(PARAKEET_SHAPES.tiny).map((t) => t.name));
    expect(() => readParakeetHeader(models.whisper)).toThrow("not a Parakeet");
  });
});

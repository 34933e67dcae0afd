import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { RuntimeFiles } from "../runtime/files";
import { useOnnxruntimeFrom } from "../runtime/onnxruntime";
import type { Embedder } from "./embedder";
import { MissingModelError } from "./missing-model";

type Extractor = (texts: string[], options: { pooling: "mean"; normalize: boolean }) => Promise<{ data: Float32Array | number[]; dims: number[] }>;

/** Texts per forward pass: bounds memory on long re-indexes without losing much to call overhead. */
const BATCH = 16;

/**
 * Sentence embeddings over transformers.js (ONNX Runtime, CPU), from local files only:
 * the model's folder (models/<name>/ by default) holds config.json, tokenizer.json and onnx/model_quantized.onnx
 * (preferred) or onnx/model.onnx. Mean pooling and L2 normalisation, as sentence-
 * transformers models are trained. The model loads lazily, once; its absence is a
 * MissingModelError at the point of use, never at boot.
 */
export class TransformersEmbedder implements Embedder {
  private extractor: Promise<Extractor> | null = null;

  /**
   * `dir` is the model's own folder; `model` is its name in models/manifest.json; `runtime`
   * a compiled executable's native files, where onnxruntime is carried (decision 090).
   */
  constructor(
    private readonly dir: string,
    readonly model: string,
    private readonly runtime?: RuntimeFiles,
  ) {}

  private assertInstalled(): void {
    const onnx = ["model_quantized.onnx", "model.onnx"].some((f) => existsSync(join(this.dir, "onnx", f)));
    if (!onnx || !existsSync(join(this.dir, "config.json")) || !existsSync(join(this.dir, "tokenizer.json")))
      throw new MissingModelError(this.model, "embedding", `${this.dir}/ (config.json, tokenizer.json and onnx/model.onnx)`);
  }

  /** Read from config.json, so the index check at start does not load the model. */
  async dimension(): Promise<number> {
    this.assertInstalled();
    const config = JSON.parse(readFileSync(join(this.dir, "config.json"), "utf8")) as { hidden_size?: number; dim?: number; d_model?: number };
    const dimension = config.hidden_size ?? config.dim ?? config.d_model;
    if (!dimension) throw new Error(`${join(this.dir, "config.json")} names no hidden_size`);
    return dimension;
  }

  private load(): Promise<Extractor> {
    this.assertInstalled();
    this.extractor ??= (async () => {
      const onnxruntime = this.runtime?.folder("onnxruntime");
      if (onnxruntime) useOnnxruntimeFrom(onnxruntime);
      const { env, pipeline } = await import("@huggingface/transformers");
      env.allowRemoteModels = false;
      env.allowLocalModels = true;
      // transformers.js resolves a model id to localModelPath/<id>/.
      env.localModelPath = dirname(this.dir);
      const quantized = existsSync(join(this.dir, "onnx", "model_quantized.onnx"));
      return (await pipeline("feature-extraction", basename(this.dir), { dtype: quantized ? "q8" : "fp32", device: "cpu" })) as unknown as Extractor;
    })().catch((err) => {
      this.extractor = null; // a broken file may be replaced; try again on the next call
      throw err;
    });
    return this.extractor;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const extract = await this.load();
    const vectors: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += BATCH) {
      const output = await extract(texts.slice(i, i + BATCH), { pooling: "mean", normalize: true });
      const [rows, width] = output.dims as [number, number];
      const data = Float32Array.from(output.data);
      for (let r = 0; r < rows; r++) vectors.push(data.slice(r * width, (r + 1) * width));
    }
    return vectors;
  }
}

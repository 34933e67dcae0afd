import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { GGML_TYPES, tensorBytes } from "../../src/model-files/ggml-header";
import { PARAKEET_FILE_TYPES, type ParakeetFileType, type ParakeetHparams } from "../../src/model-files/parakeet-header";
import { random } from "./random";
import { toHalf } from "./whisper-ggml";

/**
 * Writes random-weight Parakeet TDT models in whisper.cpp's ggml format (what its
 * convert-parakeet-to-ggml.py and parakeet-quantize write): the tiny one tests load (width
 * 8, one layer, a few hundred KB) and a stand-in with the exact hyper-parameters and tensor
 * types of parakeet-tdt-0.6b-v3 in f16, q8_0 and q4_0 for benches (speed depends on shapes,
 * types and how many tokens are decoded, not on the weights' values).
 *
 * Decoding is steered like a real model's: the joint network's blank logit is pushed down
 * and its longest duration up, so the greedy TDT loop emits one token every 4 encoder frames
 * (320 ms, about 3 tokens a second, near conversation's rate) instead of up to n_max_tokens
 * random ones at every frame.
 */

/** TDT durations (encoder frames a token spans) of the published model; the tiny one has the same. */
const TDT_DURATIONS = [0, 1, 2, 3, 4];
/** NeMo's STFT window (25 ms at 16 kHz) for the published model. */
const WINDOW_PUBLISHED = 400;

/** Published shape: parakeet-tdt-0.6b-v3's model_config.yaml as convert-parakeet-to-ggml.py writes it (n_audio_ctx is the converter's constant). */
export const PARAKEET_SHAPES = {
  tiny: {
    n_vocab: 32,
    n_audio_ctx: 3200,
    n_audio_state: 8,
    n_audio_head: 2,
    n_audio_layer: 1,
    n_mels: 16,
    n_fft: 64,
    subsampling_factor: 8,
    n_subsampling_channels: 4,
    n_conv_kernel: 3,
    n_pred_dim: 8,
    n_pred_layers: 1,
    n_tdt_durations: TDT_DURATIONS.length,
    n_max_tokens: 10,
  },
  "tdt-0.6b-v3": {
    n_vocab: 8192,
    n_audio_ctx: 5000,
    n_audio_state: 1024,
    n_audio_head: 8,
    n_audio_layer: 24,
    n_mels: 128,
    n_fft: 512,
    subsampling_factor: 8,
    n_subsampling_channels: 256,
    n_conv_kernel: 9,
    n_pred_dim: 640,
    n_pred_layers: 2,
    n_tdt_durations: TDT_DURATIONS.length,
    n_max_tokens: 10,
  },
} satisfies Record<string, ParakeetHparams>;

type Tensor = { name: string; ne: number[]; type: number };

/** ggml elements per block of a type (1 for f32 and f16). */
const blockSize = (type: number) => (type === GGML_TYPES.f32 || type === GGML_TYPES.f16 ? 1 : type === GGML_TYPES.q4_k ? 256 : 32);

/**
 * The tensors of a model, in NeMo's state-dict order, with the types parakeet.cpp's loader
 * declares (ne in ggml order, innermost first). Matrices are the file's type; vectors,
 * biases, norms, the 4-D subsampling convolutions, the depthwise convolution and the
 * positional biases f32 (the converter's and parakeet-quantize's rules). The prediction and
 * joint matrices, n_pred_dim wide, stay f32 where the type's block does not divide it.
 */
export function parakeetTensors(h: ParakeetHparams, fileType: ParakeetFileType = "f16"): Tensor[] {
  const w = GGML_TYPES[PARAKEET_FILE_TYPES[fileType].tensors];
  const f32 = GGML_TYPES.f32;
  const n = h.n_audio_state;
  const c = h.n_subsampling_channels;
  const p = h.n_pred_dim;
  const pw = h.n_pred_dim % blockSize(w) === 0 ? w : f32;
  const t = (name: string, ne: number[], type: number = f32): Tensor => ({ name, ne, type });
  const conv = (i: number, ne: number[]) => [t(`encoder.pre_encode.conv.${i}.weight`, ne), t(`encoder.pre_encode.conv.${i}.bias`, [1, 1, c, 1])];
  const layer = (i: number): Tensor[] => {
    const l = `encoder.layers.${i}`;
    const norm = (name: string) => [t(`${l}.${name}.weight`, [n]), t(`${l}.${name}.bias`, [n])];
    const ff = (k: number) => [t(`${l}.feed_forward${k}.linear1.weight`, [n, 4 * n], w), t(`${l}.feed_forward${k}.linear2.weight`, [4 * n, n], w)];
    return [
      ...norm("norm_feed_forward1"),
      ...ff(1),
      ...norm("norm_conv"),
      t(`${l}.conv.pointwise_conv1.weight`, [n, 2 * n], w),
      t(`${l}.conv.depthwise_conv.weight`, [h.n_conv_kernel, n]),
      t(`${l}.conv.batch_norm.weight`, [n]),
      t(`${l}.conv.batch_norm.bias`, [n]),
      t(`${l}.conv.batch_norm.running_mean`, [n]),
      t(`${l}.conv.batch_norm.running_var`, [n]),
      t(`${l}.conv.batch_norm.num_batches_tracked`, []), // a 0-d counter, as the converter writes it
      t(`${l}.conv.pointwise_conv2.weight`, [n, n], w),
      ...norm("norm_self_att"),
      t(`${l}.self_attn.pos_bias_u`, [n / h.n_audio_head, h.n_audio_head]),
      t(`${l}.self_attn.pos_bias_v`, [n / h.n_audio_head, h.n_audio_head]),
      ...["q", "k", "v", "out", "pos"].map((x) => t(`${l}.self_attn.linear_${x}.weight`, [n, n], w)),
      ...norm("norm_feed_forward2"),
      ...ff(2),
      ...norm("norm_out"),
    ];
  };
  const lstm = (i: number) => [
    t(`decoder.prediction.dec_rnn.lstm.weight_ih_l${i}`, [p, 4 * p], pw),
    t(`decoder.prediction.dec_rnn.lstm.weight_hh_l${i}`, [p, 4 * p], pw),
    t(`decoder.prediction.dec_rnn.lstm.bias_h_l${i}`, [4 * p]),
  ];
  const range = <T>(count: number, make: (i: number) => T[]) => Array.from({ length: count }, (_, i) => make(i)).flat();
  return [
    ...conv(0, [3, 3, 1, c]),
    ...conv(2, [3, 3, 1, c]),
    ...conv(3, [1, 1, c, c]),
    ...conv(5, [3, 3, 1, c]),
    ...conv(6, [1, 1, c, c]),
    t("encoder.pre_encode.out.weight", [(h.n_mels / h.subsampling_factor) * c, n], w),
    t("encoder.pre_encode.out.bias", [n]),
    ...range(h.n_audio_layer, layer),
    t("decoder.prediction.embed.weight", [p, h.n_vocab + 1], pw),
    ...range(h.n_pred_layers, lstm),
    t("joint.pred.weight", [p, p], pw),
    t("joint.pred.bias", [p]),
    t("joint.enc.weight", [n, p], w),
    t("joint.enc.bias", [p]),
    t("joint.joint_net.2.weight", [p, h.n_vocab + h.n_tdt_durations + 1], pw),
    t("joint.joint_net.2.bias", [h.n_vocab + h.n_tdt_durations + 1]),
  ];
}

/** Norm and batch-norm scales and variances at 1 keep activations in range; the joint bias steers decoding (see above); the rest small noise. */
function tensorData(t: Tensor, h: ParakeetHparams, rand: () => number): Uint8Array {
  const count = t.ne.reduce((a, b) => a * b, 1);
  const one = /norm.*\.weight$|running_var$/.test(t.name) ? 1 : 0;
  const value = () => one + (rand() - 0.5) * 0.2;
  if (t.type === GGML_TYPES.f32) {
    const out = Float32Array.from({ length: count }, value);
    if (t.name.endsWith("num_batches_tracked")) out[0] = 0;
    if (t.name === "joint.joint_net.2.bias") {
      out[h.n_vocab] = -20; // blank: never the argmax
      out[h.n_vocab + h.n_tdt_durations] = 20; // the longest duration
    }
    return new Uint8Array(out.buffer);
  }
  if (t.type === GGML_TYPES.f16) {
    const out = new Uint16Array(count);
    for (let i = 0; i < count; i++) out[i] = toHalf(value());
    return new Uint8Array(out.buffer);
  }
  // q8_0 (34-byte blocks) and q4_0 (18): random quants, each block's scale small.
  const out = new Uint8Array(tensorBytes(t.type, count));
  for (let i = 0; i < out.length; i++) out[i] = (rand() * 256) | 0;
  const view = new DataView(out.buffer);
  const blockBytes = t.type === GGML_TYPES.q8_0 ? 34 : 18;
  const scale = t.type === GGML_TYPES.q8_0 ? 0.1 / 128 : 0.1 / 8;
  for (let b = 0; b < out.length; b += blockBytes) view.setUint16(b, toHalf(scale), true);
  return out;
}

/** Piece `id` of the stand-in vocabulary: most start a word (SentencePiece's "▁"), some continue one, two are punctuation. */
function piece(id: number): string {
  if (id === 0) return "<unk>";
  if (id === 1) return ".";
  if (id === 2) return ",";
  return id % 3 === 0 ? `ian${id.toString(36)}` : `\u2581w${id.toString(36)}`;
}

export type ParakeetModelOptions = { seed?: number; shape?: keyof typeof PARAKEET_SHAPES; fileType?: ParakeetFileType };

/** Writes the model to `path` (parent folders created): header, filterbank, window, durations, vocabulary, then each tensor, streamed. */
export function writeParakeetModel(path: string, options: ParakeetModelOptions = {}): void {
  const rand = random(options.seed ?? 1);
  const h: ParakeetHparams = PARAKEET_SHAPES[options.shape ?? "tiny"];
  const fileType = options.fileType ?? "f16";
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, "w");
  const bytes = (b: Uint8Array) => writeSync(fd, b);
  const i32 = (...values: number[]) => bytes(new Uint8Array(new Int32Array(values).buffer));
  const f32s = (values: Float32Array) => bytes(new Uint8Array(values.buffer));
  try {
    i32(0x67676d6c); // "ggml"
    i32(
      h.n_vocab,
      h.n_audio_ctx,
      h.n_audio_state,
      h.n_audio_head,
      h.n_audio_layer,
      h.n_mels,
      PARAKEET_FILE_TYPES[fileType].header,
      h.n_fft,
      h.subsampling_factor,
      h.n_subsampling_channels,
      h.n_conv_kernel,
      h.n_pred_dim,
      h.n_pred_layers,
      h.n_tdt_durations,
      h.n_max_tokens,
    );
    const bins = Math.floor(h.n_fft / 2) + 1;
    i32(h.n_mels, bins);
    f32s(Float32Array.from({ length: h.n_mels * bins }, () => rand() * 0.01));
    const window = Math.min(WINDOW_PUBLISHED, h.n_fft);
    i32(window);
    f32s(Float32Array.from({ length: window }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / window))); // Hann, as NeMo's
    bytes(new Uint8Array(new Uint32Array(TDT_DURATIONS).buffer));
    i32(h.n_vocab);
    const enc = new TextEncoder();
    for (let id = 0; id < h.n_vocab; id++) {
      const text = enc.encode(piece(id));
      i32(text.length);
      bytes(text);
    }
    for (const t of parakeetTensors(h, fileType)) {
      const name = enc.encode(t.name);
      i32(t.ne.length, name.length, t.type, ...t.ne);
      bytes(name);
      bytes(tensorData(t, h, rand));
    }
  } finally {
    closeSync(fd);
  }
}

if (import.meta.main) {
  const [path = "parakeet.bin", shape = "tiny", fileType = "f16"] = process.argv.slice(2);
  writeParakeetModel(path, { shape: shape as keyof typeof PARAKEET_SHAPES, fileType: fileType as ParakeetFileType });
  console.log(`wrote ${path}`);
}

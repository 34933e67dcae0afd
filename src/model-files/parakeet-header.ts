import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { ggmlTypeName, tensorBytes } from "./ggml-header";

/**
 * The header of a Parakeet TDT model file in whisper.cpp's ggml format (its
 * models/convert-parakeet-to-ggml.py): 15 hyper-parameters, the mel filterbank, the STFT
 * window, the TDT durations, the SentencePiece vocabulary, then each tensor's name, shape
 * and type before its data. Read to tell a Parakeet file from a whisper one (both start with
 * "ggml"), for `parley doctor`, and to check generated stand-ins against the published model.
 */

export type ParakeetHparams = {
  n_vocab: number;
  n_audio_ctx: number;
  n_audio_state: number;
  n_audio_head: number;
  n_audio_layer: number;
  n_mels: number;
  n_fft: number;
  subsampling_factor: number;
  n_subsampling_channels: number;
  n_conv_kernel: number;
  n_pred_dim: number;
  n_pred_layers: number;
  n_tdt_durations: number;
  n_max_tokens: number;
};

/** The order the file states them in; ftype sits between n_mels and n_fft. */
export const PARAKEET_HPARAM_ORDER = [
  "n_vocab",
  "n_audio_ctx",
  "n_audio_state",
  "n_audio_head",
  "n_audio_layer",
  "n_mels",
  "ftype",
  "n_fft",
  "subsampling_factor",
  "n_subsampling_channels",
  "n_conv_kernel",
  "n_pred_dim",
  "n_pred_layers",
  "n_tdt_durations",
  "n_max_tokens",
] as const;

/**
 * A Parakeet file's type: the ftype its header states (parakeet-quantize adds
 * GGML_QNT_VERSION * 1000, as whisper's quantize does) and the type of its matrices. The
 * files ggml-org publishes: f16 from the converter, and q8_0 and q4_0 from
 * scripts/quantize-parakeet.sh (its k-quants are left out: Parley's header reader and
 * stand-ins do not know their block layouts).
 */
export const PARAKEET_FILE_TYPES = {
  f16: { header: 1, tensors: "f16" },
  q8_0: { header: 2007, tensors: "q8_0" },
  q4_0: { header: 2002, tensors: "q4_0" },
} as const;
export type ParakeetFileType = keyof typeof PARAKEET_FILE_TYPES;

export type ParakeetFileHeader = {
  hparams: ParakeetHparams;
  /** f16, q8_0, q4_0, or `ftype N` for a type Parley does not name. */
  fileType: string;
  tensors: { name: string; ne: number[]; type: string }[];
};

const HPARAMS = PARAKEET_HPARAM_ORDER.length;

/**
 * Whether the first ints of a ggml file are a Parakeet header: after its hyper-parameters
 * come the filterbank's mel count (= n_mels) and frequency bins (= n_fft / 2 + 1). In a
 * whisper file those places hold its filterbank's floats.
 */
function isParakeetLayout(ints: Int32Array): boolean {
  const at = (key: (typeof PARAKEET_HPARAM_ORDER)[number]) => ints[1 + PARAKEET_HPARAM_ORDER.indexOf(key)]!;
  return ints[0] === 0x67676d6c && ints[1 + HPARAMS] === at("n_mels") && ints[2 + HPARAMS] === Math.floor(at("n_fft") / 2) + 1;
}

/** Whether the file at `path` is a Parakeet model (an operator's own file has no manifest entry to say so). */
export function isParakeetFile(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return false; // missing: the engine says so when it loads
  }
  try {
    const b = Buffer.alloc(4 * (3 + HPARAMS));
    if (readSync(fd, b, 0, b.length, 0) !== b.length) return false;
    return isParakeetLayout(new Int32Array(b.buffer, b.byteOffset, 3 + HPARAMS));
  } finally {
    closeSync(fd);
  }
}

/** Reads a Parakeet model's header and, with `tensors`, its tensor table (data skipped). Throws on a file that is not one. */
export function readParakeetHeader(path: string, options: { tensors?: boolean } = {}): ParakeetFileHeader {
  const fd = openSync(path, "r");
  let offset = 0;
  const bytes = (n: number): Buffer => {
    const b = Buffer.alloc(n);
    if (readSync(fd, b, 0, n, offset) !== n) throw new Error("truncated Parakeet model file");
    offset += n;
    return b;
  };
  const i32s = (n: number): number[] => {
    const b = bytes(4 * n);
    return Array.from({ length: n }, (_, i) => b.readInt32LE(4 * i));
  };
  try {
    const head = i32s(3 + HPARAMS);
    if (!isParakeetLayout(Int32Array.from(head))) throw new Error(`${path} is not a Parakeet (ggml) model file`);
    const values = Object.fromEntries(PARAKEET_HPARAM_ORDER.map((k, i) => [k, head[1 + i]!]));
    const { ftype, ...hparams } = values as ParakeetHparams & { ftype: number };
    const fileType = Object.entries(PARAKEET_FILE_TYPES).find(([, t]) => t.header === ftype)?.[0] ?? `ftype ${ftype}`;
    const tensors: ParakeetFileHeader["tensors"] = [];
    if (options.tensors) {
      offset += 4 * head[1 + HPARAMS]! * head[2 + HPARAMS]!; // filterbank
      // Each length is read before `offset +=`, which would otherwise take the offset's value first.
      const window = i32s(1)[0]!;
      offset += 4 * window + 4 * hparams.n_tdt_durations;
      const tokens = i32s(1)[0]!;
      for (let i = 0; i < tokens; i++) {
        const length = i32s(1)[0]!;
        offset += length;
      }
      for (const size = fstatSync(fd).size; offset < size; ) {
        const [dims, nameLength, type] = i32s(3);
        const ne = i32s(dims!);
        const name = bytes(nameLength!).toString("utf8");
        offset += tensorBytes(
          type!,
          ne.reduce((a, b) => a * b, 1),
        );
        tensors.push({ name, ne, type: ggmlTypeName(type!) });
      }
    }
    return { hparams, fileType, tensors };
  } finally {
    closeSync(fd);
  }
}

/** What a Parakeet file is, from its header: "f16, 1024 wide, 24 encoder layers, 8192 tokens". */
export function describeParakeetFile({ fileType, hparams: h }: Pick<ParakeetFileHeader, "fileType" | "hparams">): string {
  return `${fileType}, ${h.n_audio_state} wide, ${h.n_audio_layer} encoder layers, ${h.n_vocab} tokens`;
}

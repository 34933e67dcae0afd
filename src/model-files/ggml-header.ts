import { closeSync, openSync, readSync } from "node:fs";

/**
 * The header of a whisper.cpp model file (legacy ggml format: hyper-parameters, mel
 * filters, vocabulary, then each tensor's name, shape and type before its data). Read to
 * say which model and quantization a file is (`parley doctor`) and to check generated
 * stand-ins against the published models (test/model-files/shapes.test.ts).
 */

/** ggml_type ids and their block sizes (elements, bytes), from ggml.h and ggml-common.h. */
export const GGML_TYPES = { f32: 0, f16: 1, q4_0: 2, q4_1: 3, q5_0: 6, q5_1: 7, q8_0: 8, q4_k: 12, q6_k: 14 } as const;
const BLOCKS: Record<number, [elements: number, bytes: number]> = {
  0: [1, 4],
  1: [1, 2],
  2: [32, 18],
  3: [32, 20],
  6: [32, 22],
  7: [32, 24],
  8: [32, 34],
  12: [256, 144],
  14: [256, 210],
};
const TYPE_NAMES = Object.fromEntries(Object.entries(GGML_TYPES).map(([name, id]) => [id, name])) as Record<number, string>;

export const ggmlTypeName = (type: number): string => TYPE_NAMES[type] ?? `type ${type}`;

/** Bytes of `count` elements of a ggml type. */
export function tensorBytes(type: number, count: number): number {
  const block = BLOCKS[type];
  if (!block) throw new Error(`unknown ggml type ${type}`);
  if (count % block[0] !== 0) throw new Error(`${count} elements do not fill ${ggmlTypeName(type)} blocks of ${block[0]}`);
  return (count / block[0]) * block[1];
}

/**
 * A whisper file's type: the ftype its header states (quantized files add
 * GGML_QNT_VERSION * 1000, as whisper.cpp's quantize writes it) and the type of its matrices.
 */
export const WHISPER_FILE_TYPES = {
  f16: { header: 1, tensors: "f16" },
  q8_0: { header: 2007, tensors: "q8_0" },
  q5_1: { header: 2009, tensors: "q5_1" },
} as const;
export type WhisperFileType = keyof typeof WHISPER_FILE_TYPES;

export type WhisperHparams = {
  n_vocab: number;
  n_audio_ctx: number;
  n_audio_state: number;
  n_audio_head: number;
  n_audio_layer: number;
  n_text_ctx: number;
  n_text_state: number;
  n_text_head: number;
  n_text_layer: number;
  n_mels: number;
};
const HPARAM_ORDER: (keyof WhisperHparams)[] = [
  "n_vocab",
  "n_audio_ctx",
  "n_audio_state",
  "n_audio_head",
  "n_audio_layer",
  "n_text_ctx",
  "n_text_state",
  "n_text_head",
  "n_text_layer",
  "n_mels",
];

export type WhisperFileHeader = {
  hparams: WhisperHparams;
  /** f16, q8_0, q5_1, or `ftype N` for a type Parley does not name. */
  fileType: string;
  tensors: { name: string; ne: number[]; type: string }[];
};

/** Positional reads: tensor data is skipped, not read, so a 500 MB file is scanned in milliseconds. */
class Reader {
  offset = 0;
  constructor(private readonly fd: number) {}
  bytes(n: number): Buffer {
    const b = Buffer.alloc(n);
    if (readSync(this.fd, b, 0, n, this.offset) !== n) throw new Error("truncated whisper model file");
    this.offset += n;
    return b;
  }
  i32s(n: number): number[] {
    const b = this.bytes(4 * n);
    return Array.from({ length: n }, (_, i) => b.readInt32LE(4 * i));
  }
  atEnd(): boolean {
    return readSync(this.fd, Buffer.alloc(1), 0, 1, this.offset) === 0;
  }
}

/** Reads a whisper.cpp model's header and, with `tensors`, its tensor table. Throws on a file that is not one. */
export function readWhisperHeader(path: string, options: { tensors?: boolean } = {}): WhisperFileHeader {
  const fd = openSync(path, "r");
  try {
    const r = new Reader(fd);
    if (r.i32s(1)[0] !== 0x67676d6c) throw new Error(`${path} is not a whisper.cpp (ggml) model file`);
    const values = r.i32s(11);
    const hparams = Object.fromEntries(HPARAM_ORDER.map((k, i) => [k, values[i]!])) as WhisperHparams;
    const ftype = values[10]!;
    const fileType = Object.entries(WHISPER_FILE_TYPES).find(([, t]) => t.header === ftype || t.header % 1000 === ftype)?.[0] ?? `ftype ${ftype}`;
    const tensors: WhisperFileHeader["tensors"] = [];
    if (options.tensors) {
      const [nMels, nFft] = r.i32s(2);
      r.offset += 4 * nMels! * nFft!;
      const [tokens] = r.i32s(1);
      for (let i = 0; i < tokens!; i++) {
        const length = r.i32s(1)[0]!; // read before `offset +=` takes the offset's value
        r.offset += length;
      }
      while (!r.atEnd()) {
        const [dims, nameLength, type] = r.i32s(3);
        const ne = r.i32s(dims!);
        const name = r.bytes(nameLength!).toString("utf8");
        r.offset += tensorBytes(
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

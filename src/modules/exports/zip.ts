import { crc32 } from "node:zlib";

/** One file of an archive: its path inside, and its bytes (a stream for audio). */
export type ZipEntry = { name: string; data: Uint8Array | AsyncIterable<Uint8Array> };
/** What was written of an entry, for the manifest: measured while the bytes streamed through. */
export type WrittenEntry = { name: string; size: number; sha256: string };

const MAX_ZIP32 = 0xffff_ffff;
// Bit 3: sizes and CRC follow the data (so audio streams through); bit 11: UTF-8 names.
const FLAGS = 0x0808;

function dosDateTime(at: Date): { time: number; date: number } {
  return {
    time: (at.getUTCHours() << 11) | (at.getUTCMinutes() << 5) | Math.floor(at.getUTCSeconds() / 2),
    date: ((at.getUTCFullYear() - 1980) << 9) | ((at.getUTCMonth() + 1) << 5) | at.getUTCDate(),
  };
}

function record(fields: [number, 2 | 4][], name?: Uint8Array): Uint8Array {
  const size = fields.reduce((n, [, width]) => n + width, 0);
  const out = new Uint8Array(size + (name?.length ?? 0));
  const view = new DataView(out.buffer);
  let at = 0;
  for (const [value, width] of fields) {
    if (width === 2) view.setUint16(at, value, true);
    else view.setUint32(at, value, true);
    at += width;
  }
  if (name) out.set(name, at);
  return out;
}

/**
 * A zip archive of `entries`, stored without compression (audio is compressed already, and
 * a plain layout is easy to check by hand), produced as a stream: each entry's CRC, size
 * and SHA-256 are measured as it passes, and `onEntry` receives them. Zip32 only: an
 * archive over 4 GiB is refused.
 */
export async function* zipStream(entries: AsyncIterable<ZipEntry>, at: Date, onEntry: (entry: WrittenEntry) => void): AsyncGenerator<Uint8Array> {
  const { time, date } = dosDateTime(at);
  const central: Uint8Array[] = [];
  let offset = 0;
  let count = 0;
  const emit = (bytes: Uint8Array) => {
    offset += bytes.length;
    if (offset > MAX_ZIP32) throw new Error("the export is larger than 4 GiB, the limit of its zip format: narrow it (fewer recordings or a shorter period)");
    return bytes;
  };
  for await (const entry of entries) {
    const name = new TextEncoder().encode(entry.name);
    const start = offset;
    yield emit(
      record(
        [
          [0x04034b50, 4],
          [20, 2],
          [FLAGS, 2],
          [0, 2],
          [time, 2],
          [date, 2],
          [0, 4],
          [0, 4],
          [0, 4],
          [name.length, 2],
          [0, 2],
        ],
        name,
      ),
    );
    let crc = 0;
    let size = 0;
    const hash = new Bun.CryptoHasher("sha256");
    for await (const chunk of entry.data instanceof Uint8Array ? [entry.data] : entry.data) {
      crc = crc32(chunk, crc);
      size += chunk.length;
      hash.update(chunk);
      yield emit(chunk);
    }
    yield emit(
      record([
        [0x08074b50, 4],
        [crc, 4],
        [size, 4],
        [size, 4],
      ]),
    );
    central.push(
      record(
        [
          [0x02014b50, 4],
          [20, 2],
          [20, 2],
          [FLAGS, 2],
          [0, 2],
          [time, 2],
          [date, 2],
          [crc, 4],
          [size, 4],
          [size, 4],
          [name.length, 2],
          [0, 2],
          [0, 2],
          [0, 2],
          [0, 2],
          [0, 4],
          [start, 4],
        ],
        name,
      ),
    );
    count++;
    onEntry({ name: entry.name, size, sha256: hash.digest("hex") });
  }
  const directoryStart = offset;
  for (const c of central) yield emit(c);
  yield emit(
    record([
      [0x06054b50, 4],
      [0, 2],
      [0, 2],
      [count, 2],
      [count, 2],
      [offset - directoryStart, 4],
      [directoryStart, 4],
      [0, 2],
    ]),
  );
}

/** The entries of a stored zip (what zipStream writes), from its central directory; throws on anything else. */
export function readZip(bytes: Uint8Array): { name: string; data: Uint8Array }[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let end = bytes.length - 22;
  while (end >= 0 && view.getUint32(end, true) !== 0x06054b50) end--;
  if (end < 0) throw new Error("not a zip archive (no end of central directory)");
  const count = view.getUint16(end + 10, true);
  let at = view.getUint32(end + 16, true);
  const entries: { name: string; data: Uint8Array }[] = [];
  for (let i = 0; i < count; i++) {
    if (view.getUint32(at, true) !== 0x02014b50) throw new Error(`damaged central directory at entry ${i + 1}`);
    const method = view.getUint16(at + 10, true);
    const size = view.getUint32(at + 20, true);
    const nameLength = view.getUint16(at + 28, true);
    const skip = view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
    const local = view.getUint32(at + 42, true);
    const name = new TextDecoder().decode(bytes.subarray(at + 46, at + 46 + nameLength));
    if (method !== 0) throw new Error(`${name}: compressed entries are not part of a Parley export`);
    const dataStart = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    entries.push({ name, data: bytes.subarray(dataStart, dataStart + size) });
    at += 46 + nameLength + skip;
  }
  return entries;
}

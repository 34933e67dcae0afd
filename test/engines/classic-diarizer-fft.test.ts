import { describe, expect, test } from "bun:test";
import { RealPowerSpectrum } from "../../src/engines/speaker-fft";

/** |X[k]|² by the DFT's definition, O(n²): what the fast transform must agree with. */
function directPower(frame: Float64Array): Float64Array {
  const n = frame.length;
  return Float64Array.from({ length: n / 2 + 1 }, (_, k) => {
    let re = 0;
    let im = 0;
    for (let t = 0; t < n; t++) {
      re += frame[t]! * Math.cos((2 * Math.PI * k * t) / n);
      im -= frame[t]! * Math.sin((2 * Math.PI * k * t) / n);
    }
    return re * re + im * im;
  });
}

/** A fixed pseudo-random sequence (xorshift), so a failure reproduces. */
function noise(length: number, seed: number): Float64Array {
  let s = seed;
  return Float64Array.from({ length }, () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 31 - 1;
  });
}

describe("RealPowerSpectrum", () => {
  test("matches a direct DFT on random frames of every size the diarizer could use", () => {
    for (const size of [4, 8, 64, 512, 1024]) {
      const fft = new RealPowerSpectrum(size);
      const power = new Float64Array(size / 2 + 1);
      for (const seed of [1, 7, 12345]) {
        const frame = noise(size, seed);
        fft.compute(frame, power);
        const expected = directPower(frame);
        const scale = Math.max(...expected);
        for (let k = 0; k <= size / 2; k++) expect(Math.abs(power[k]! - expected[k]!) / scale).toBeLessThan(1e-12);
      }
    }
  });

  test("a pure tone on a bin puts its energy there and nowhere else; a zero-padded frame is transformed as a whole", () => {
    const fft = new RealPowerSpectrum(512);
    const power = new Float64Array(257);
    fft.compute(
      Float64Array.from({ length: 512 }, (_, t) => Math.cos((2 * Math.PI * 37 * t) / 512)),
      power,
    );
    expect(power[37]).toBeCloseTo(256 ** 2, 6);
    for (let k = 0; k <= 256; k++) if (k !== 37) expect(power[k]).toBeLessThan(1e-12);
    const padded = new Float64Array(512);
    padded.set(noise(400, 3));
    fft.compute(padded, power);
    const expected = directPower(padded);
    for (let k = 0; k <= 256; k++) expect(power[k]).toBeCloseTo(expected[k]!, 8);
  });

  test("refuses a size that is not a power of two", () => {
    expect(() => new RealPowerSpectrum(400)).toThrow("not a power of two");
  });
});

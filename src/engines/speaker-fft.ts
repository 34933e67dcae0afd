/**
 * The power spectrum of a real frame by a complex FFT of half its length (decision 220): the
 * even samples as the real parts, the odd ones as the imaginary parts, then one pass that
 * splits the two spectra apart and joins them. Half the butterflies of a full-length complex
 * FFT over a zero imaginary part, which was most of the classic diarizer's time.
 */
export class RealPowerSpectrum {
  private readonly half: number;
  private readonly bitReversed: Uint16Array;
  /** The half-length FFT's twiddles, e^(-2πik/half) for k < half/2. */
  private readonly cos: Float64Array;
  private readonly sin: Float64Array;
  /** The joining pass's twiddles, e^(-2πik/size) for k <= half/2. */
  private readonly joinCos: Float64Array;
  private readonly joinSin: Float64Array;
  private readonly re: Float64Array;
  private readonly im: Float64Array;

  /** `size`: the frame's length, a power of two (at least 4). */
  constructor(readonly size: number) {
    if (size < 4 || (size & (size - 1)) !== 0) throw new Error(`FFT size ${size} is not a power of two of at least 4`);
    const half = size / 2;
    this.half = half;
    const bits = Math.log2(half);
    this.bitReversed = Uint16Array.from({ length: half }, (_, i) => {
      let r = 0;
      for (let b = 0; b < bits; b++) r |= ((i >> b) & 1) << (bits - 1 - b);
      return r;
    });
    this.cos = Float64Array.from({ length: half / 2 }, (_, k) => Math.cos((2 * Math.PI * k) / half));
    this.sin = Float64Array.from({ length: half / 2 }, (_, k) => -Math.sin((2 * Math.PI * k) / half));
    this.joinCos = Float64Array.from({ length: half / 2 + 1 }, (_, k) => Math.cos((2 * Math.PI * k) / size));
    this.joinSin = Float64Array.from({ length: half / 2 + 1 }, (_, k) => -Math.sin((2 * Math.PI * k) / size));
    this.re = new Float64Array(half);
    this.im = new Float64Array(half);
  }

  /** |X[k]|² for k = 0 .. size/2 of the DFT of `frame` (`size` samples) into `power` (size/2 + 1 values). */
  compute(frame: Float64Array, power: Float64Array): void {
    const { half, re, im, bitReversed, cos, sin } = this;
    for (let n = 0; n < half; n++) {
      const j = bitReversed[n]!;
      re[j] = frame[2 * n]!;
      im[j] = frame[2 * n + 1]!;
    }
    for (let span = 1; span < half; span <<= 1) {
      const step = half / (2 * span);
      for (let start = 0; start < half; start += 2 * span) {
        for (let k = 0; k < span; k++) {
          const wr = cos[k * step]!;
          const wi = sin[k * step]!;
          const a = start + k;
          const b = a + span;
          const rb = re[b]!;
          const ib = im[b]!;
          const tr = rb * wr - ib * wi;
          const ti = rb * wi + ib * wr;
          const ra = re[a]!;
          const ia = im[a]!;
          re[b] = ra - tr;
          im[b] = ia - ti;
          re[a] = ra + tr;
          im[a] = ia + ti;
        }
      }
    }
    // Z = E + iO, E and O the spectra of the even and odd samples: E[k] = (Z[k] + conj Z[-k]) / 2,
    // O[k] = (Z[k] - conj Z[-k]) / 2i, and X[k] = E[k] + e^(-2πik/size) O[k]; X[size - k] = conj X[k].
    const { joinCos, joinSin } = this;
    for (let k = 0; k <= half / 2; k++) {
      const m = (half - k) % half;
      const zr = re[k]!;
      const zi = im[k]!;
      const yr = re[m]!;
      const yi = im[m]!;
      const er = 0.5 * (zr + yr);
      const ei = 0.5 * (zi - yi);
      const or = 0.5 * (zi + yi);
      const oi = -0.5 * (zr - yr);
      const c = joinCos[k]!;
      const s = joinSin[k]!;
      // X[k]; and X[half - k] from the same pair: there E and O are conjugated and the twiddle is -conj e^(-2πik/size).
      const xr = er + c * or - s * oi;
      const xi = ei + c * oi + s * or;
      power[k] = xr * xr + xi * xi;
      const mr = er - c * or + s * oi;
      const mi = -ei + c * oi + s * or;
      power[half - k] = mr * mr + mi * mi;
    }
  }
}

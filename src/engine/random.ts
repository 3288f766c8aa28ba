/**
 * A seeded pseudo-random source (sfc32): the same seed gives the same ids and key material, so
 * a run can be reproduced. Not cryptographically secure — the simulator's keys protect nothing.
 */
export class Random {
  #a = 0;
  #b = 0;
  #c = 0;
  #d = 0;
  readonly seed: number;

  constructor(seed: number) {
    if (!Number.isSafeInteger(seed)) throw new RangeError(`The seed must be an integer, got ${String(seed)}.`);
    this.seed = seed;
    this.reseed(seed);
  }

  /** Starts the sequence again from `seed`. */
  reseed(seed: number): void {
    // Split the (up to 53-bit) seed into two words, then warm up so nearby seeds diverge.
    this.#a = 0x9e3779b9;
    this.#b = seed >>> 0;
    this.#c = Math.floor(seed / 0x1_0000_0000) >>> 0;
    this.#d = 1;
    for (let i = 0; i < 15; i++) this.nextUint32();
  }

  /** A uniformly distributed unsigned 32-bit integer. */
  nextUint32(): number {
    const t = (((this.#a + this.#b) | 0) + this.#d) | 0;
    this.#d = (this.#d + 1) | 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) | 0;
    this.#c = (this.#c << 21) | (this.#c >>> 11);
    this.#c = (this.#c + t) | 0;
    return t >>> 0;
  }

  /** An integer in [0, maxExclusive), without modulo bias. */
  int(maxExclusive: number): number {
    if (!Number.isInteger(maxExclusive) || maxExclusive <= 0 || maxExclusive > 0x1_0000_0000) {
      throw new RangeError(`maxExclusive must be an integer in 1..2^32, got ${maxExclusive}.`);
    }
    const limit = 0x1_0000_0000 - (0x1_0000_0000 % maxExclusive);
    for (;;) {
      const x = this.nextUint32();
      if (x < limit) return x % maxExclusive;
    }
  }

  /** `length` random bytes. */
  bytes(length: number): Uint8Array {
    const out = new Uint8Array(length);
    for (let i = 0; i < length; i += 4) {
      let x = this.nextUint32();
      for (let j = i; j < Math.min(i + 4, length); j++) {
        out[j] = x & 0xff;
        x >>>= 8;
      }
    }
    return out;
  }

  /** The internal state, for snapshots. */
  getState(): [number, number, number, number] {
    return [this.#a, this.#b, this.#c, this.#d];
  }

  /** Continues from a state taken by `getState`. */
  setState(state: readonly [number, number, number, number]): void {
    [this.#a, this.#b, this.#c, this.#d] = state;
  }
}

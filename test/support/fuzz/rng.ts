/**
 * A small seeded PRNG (mulberry32): a run is replayed from its seed alone, on any machine, with no
 * dependency. Each request draws from a generator of its own, seeded from the run's seed and the
 * request's index, so one case is replayed without generating the ones before it.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** The generator of case `index` of the run with seed `seed`. */
  static forCase(seed: number, index: number): Rng {
    return new Rng(Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35));
  }

  /** A float in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** An integer in [min, max], small ones far likelier: sizes grow, most cases stay cheap. */
  size(min: number, max: number): number {
    return Math.min(max, min + Math.floor((max - min + 1) ** this.next()) - 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  /** One of the weighted choices. */
  weighted<T>(choices: ReadonlyArray<readonly [number, T]>): T {
    let r = this.next() * choices.reduce((sum, [w]) => sum + w, 0);
    for (const [w, value] of choices) if ((r -= w) < 0) return value;
    return choices[choices.length - 1][1];
  }
}

/** A seed for a run that was given none. */
export const randomSeed = () => Math.floor(Math.random() * 2 ** 32);

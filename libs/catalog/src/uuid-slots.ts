/**
 * Numbers canonical (lowercase) UUID strings 0, 1, 2... and finds them again, holding each as 16
 * bytes in one typed array instead of a string and a map entry: a database has a transaction id
 * per commit, millions of them.
 */
export class UuidSlots {
  private words = new Uint32Array(4 * 1024);
  /** Open addressing, linear probing; slot + 1, 0 when empty; at most half full. */
  private buckets = new Int32Array(2048);
  private count = 0;
  private readonly scratch = new Uint32Array(4);
  /** The last id parsed into `scratch`: folding an event asks about its transaction id two or three times. */
  private parsed?: string;
  private parsedOk = false;

  get size(): number {
    return this.count;
  }

  /** The slot of a UUID, -1 if it was never added or is not a canonical UUID. */
  find(uuid: string): number {
    if (!this.parse(uuid)) return -1;
    return this.findWords(this.scratch);
  }

  /** Adds a UUID and returns its slot (its existing slot if it was added before); -1 if it is not canonical. */
  add(uuid: string): number {
    if (!this.parse(uuid)) return -1;
    const existing = this.findWords(this.scratch);
    if (existing >= 0) return existing;
    return this.append(this.scratch);
  }

  uuidAt(slot: number): string {
    // Built from char codes in one go: concatenating pieces makes a rope that every later compare flattens.
    let at = 0;
    for (let k = 0; k < 4; k++) {
      const word = this.words[slot * 4 + k];
      for (let shift = 28; shift >= 0; shift -= 4) UUID_CHARS[DIGIT_AT[at++]] = HEX[(word >>> shift) & 15];
    }
    return String.fromCharCode.apply(null, UUID_CHARS);
  }

  /** The raw words of slots 0..size-1, four per slot (a copy). */
  exportWords(): Uint32Array {
    return this.words.slice(0, this.count * 4);
  }

  /** Adds every UUID of `words` (as exportWords gives them) in order, as slots size, size+1... */
  importWords(words: Uint32Array): void {
    const w = new Uint32Array(4);
    for (let i = 0; i < words.length; i += 4) {
      w[0] = words[i];
      w[1] = words[i + 1];
      w[2] = words[i + 2];
      w[3] = words[i + 3];
      this.append(w);
    }
  }

  private parse(uuid: string): boolean {
    if (uuid !== this.parsed) {
      this.parsedOk = parseUuid(uuid, this.scratch);
      this.parsed = uuid;
    }
    return this.parsedOk;
  }

  private append(w: Uint32Array): number {
    const slot = this.count;
    if ((slot + 1) * 4 > this.words.length) {
      const grown = new Uint32Array(this.words.length * 2);
      grown.set(this.words);
      this.words = grown;
    }
    this.words.set(w, slot * 4);
    this.count++;
    if (this.count * 2 > this.buckets.length) this.rehash(this.buckets.length * 2);
    else this.place(slot);
    return slot;
  }

  private findWords(w: Uint32Array): number {
    const mask = this.buckets.length - 1;
    for (let b = hashOf(w[0], w[1], w[2], w[3]) & mask; ; b = (b + 1) & mask) {
      const entry = this.buckets[b];
      if (entry === 0) return -1;
      const at = (entry - 1) * 4;
      if (this.words[at] === w[0] && this.words[at + 1] === w[1] && this.words[at + 2] === w[2] && this.words[at + 3] === w[3]) {
        return entry - 1;
      }
    }
  }

  private place(slot: number): void {
    const mask = this.buckets.length - 1;
    const at = slot * 4;
    let b = hashOf(this.words[at], this.words[at + 1], this.words[at + 2], this.words[at + 3]) & mask;
    while (this.buckets[b] !== 0) b = (b + 1) & mask;
    this.buckets[b] = slot + 1;
  }

  private rehash(size: number): void {
    this.buckets = new Int32Array(size);
    for (let slot = 0; slot < this.count; slot++) this.place(slot);
  }
}

/** Only the form randomUUID() gives (8-4-4-4-12 lowercase hex digits) is canonical: it prints back the same. */
function parseUuid(s: string, out: Uint32Array): boolean {
  if (s.length !== 36 || s.charCodeAt(8) !== 45 || s.charCodeAt(13) !== 45 || s.charCodeAt(18) !== 45 || s.charCodeAt(23) !== 45) {
    return false;
  }
  let word = 0;
  let digits = 0;
  let w = 0;
  for (let i = 0; i < 36; i++) {
    if (i === 8 || i === 13 || i === 18 || i === 23) continue;
    const c = s.charCodeAt(i);
    const v = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
    if (v < 0) return false;
    word = word * 16 + v;
    if (++digits === 8) {
      out[w++] = word;
      word = 0;
      digits = 0;
    }
  }
  return true;
}

const HEX = [...'0123456789abcdef'].map((c) => c.charCodeAt(0));
const DIGIT_AT = [...Array(36).keys()].filter((i) => i !== 8 && i !== 13 && i !== 18 && i !== 23);
const UUID_CHARS: number[] = new Array(36).fill(45);

function hashOf(a: number, b: number, c: number, d: number): number {
  // Some UUID versions start with a timestamp, so every word is mixed in.
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13) ^ b, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 16) ^ c, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13) ^ d, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

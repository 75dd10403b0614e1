/** A set of names kept in code-unit order, so pages come out without sorting on every list. */
export class SortedNames {
  private readonly names: string[] = [];

  get size(): number {
    return this.names.length;
  }

  add(name: string): void {
    const i = this.lowerBound(name);
    if (this.names[i] !== name) this.names.splice(i, 0, name);
  }

  delete(name: string): void {
    const i = this.lowerBound(name);
    if (this.names[i] === name) this.names.splice(i, 1);
  }

  has(name: string): boolean {
    return this.names[this.lowerBound(name)] === name;
  }

  /** Names strictly after `after` (all when undefined), in order. */
  *after(after?: string): IterableIterator<string> {
    let i = after === undefined ? 0 : this.upperBound(after);
    while (i < this.names.length) yield this.names[i++];
  }

  /** Up to `limit` names strictly after `after`, and whether more follow: a slice, not a walk. */
  page(after: string | undefined, limit: number | undefined): { names: string[]; more: boolean } {
    const start = after === undefined ? 0 : this.upperBound(after);
    const end = limit === undefined ? this.names.length : Math.min(this.names.length, start + limit);
    return { names: this.names.slice(start, end), more: end < this.names.length };
  }

  toArray(): readonly string[] {
    return this.names;
  }

  private lowerBound(name: string): number {
    let lo = 0;
    let hi = this.names.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.names[mid] < name) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private upperBound(name: string): number {
    let lo = 0;
    let hi = this.names.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.names[mid] <= name) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

export interface PageRequest {
  /** Exclusive start: items strictly after this one. */
  pageToken?: string;
  /** Inclusive upper bound on the items returned; none means everything. */
  limit?: number;
}

export interface Page<T> {
  items: T[];
  /** The last item's token when more remain; null at the end. */
  pageToken: string | null;
}

/** Takes one page from an ordered source that already starts after the request's token. */
export function takePage<T>(source: Iterable<T>, limit: number | undefined, tokenOf: (item: T) => string): Page<T> {
  const items: T[] = [];
  const iterator = source[Symbol.iterator]();
  for (let next = iterator.next(); !next.done; next = iterator.next()) {
    if (limit !== undefined && items.length === limit) {
      return { items, pageToken: items.length ? tokenOf(items[items.length - 1]) : null };
    }
    items.push(next.value);
  }
  return { items, pageToken: null };
}

export function* filterIter<T>(source: Iterable<T>, keep: (item: T) => boolean): IterableIterator<T> {
  for (const item of source) if (keep(item)) yield item;
}

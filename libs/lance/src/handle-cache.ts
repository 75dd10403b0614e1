/** One cached handle: who is using it, and a queue for the changes that must not overlap. */
export class Slot<H> {
  users = 0;
  evicted = false;
  closed = false;
  /** The handle's version as last read inside `exclusive`, so a read compares it without a native call. */
  version?: number;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    readonly key: string,
    readonly handle: Promise<H>,
  ) {}

  /** Runs `work` after every exclusive work queued before it (a per-handle mutex). */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.tail.then(work, work);
    this.tail = run.catch(() => undefined);
    return run;
  }
}

/**
 * A bounded set of open handles, keyed, least recently used evicted first. A handle in use when it
 * is evicted (or discarded, or the cache closed) is closed once its last user is done, so no
 * request ever sees its handle closed under it. The JS Map keeps insertion order, which is all an
 * LRU needs: a used key is moved to the end, the first key is the least recently used.
 */
export class HandleCache<H extends { close(): void }> {
  private readonly slots = new Map<string, Slot<H>>();

  constructor(private readonly capacity: number) {}

  async use<T>(key: string, open: () => Promise<H>, work: (slot: Slot<H>, handle: H) => Promise<T>): Promise<T> {
    const slot = this.acquire(key, open);
    try {
      return await work(slot, await slot.handle);
    } finally {
      slot.users--;
      if (slot.evicted) this.closeIfIdle(slot);
    }
  }

  /** Stops handing out this slot's handle (it closes when idle); the next use opens a new one. */
  discard(slot: Slot<H>): void {
    if (this.slots.get(slot.key) === slot) this.slots.delete(slot.key);
    slot.evicted = true;
    this.closeIfIdle(slot);
  }

  close(): void {
    for (const slot of [...this.slots.values()]) this.discard(slot);
  }

  private acquire(key: string, open: () => Promise<H>): Slot<H> {
    let slot = this.slots.get(key);
    if (slot) {
      this.slots.delete(key);
    } else {
      slot = new Slot(key, open());
      const opened = slot;
      // A failed open is not cached: the next use tries again.
      opened.handle.catch(() => this.discard(opened));
    }
    this.slots.set(key, slot);
    slot.users++;
    while (this.slots.size > this.capacity) this.discard(this.slots.values().next().value!);
    return slot;
  }

  private closeIfIdle(slot: Slot<H>): void {
    if (slot.users > 0 || slot.closed) return;
    slot.closed = true;
    slot.handle.then((h) => h.close(), () => undefined);
  }
}

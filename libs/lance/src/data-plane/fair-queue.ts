/** Whose operation a queued one is: the data plane shares its processes between them. */
export interface Share {
  database: string;
  principal: string;
}

interface Queued<T> {
  share: Share;
  item: T;
}

/**
 * The data plane's waiting operations, handed out fairly: the database served least recently
 * first (among those below their cap of running operations), and within it the principal served
 * least recently, each principal's own operations in the order they came. So no database, and no
 * principal within one, can keep the others waiting by queueing many operations, and a database
 * at its cap leaves the free processes to the others. A database or principal with nothing waiting
 * is forgotten: when it comes back it is served before those that kept the queue full.
 */
export class FairQueue<T> {
  private readonly byDatabase = new Map<string, Map<string, Queued<T>[]>>();
  private readonly waitingIn = new Map<string, number>();
  private readonly servedAt = new Map<string, number>();
  private turn = 0;
  private total = 0;

  get size(): number {
    return this.total;
  }

  waiting(database: string): number {
    return this.waitingIn.get(database) ?? 0;
  }

  /** How many of one principal's operations wait. */
  waitingOf(share: Share): number {
    return this.byDatabase.get(share.database)?.get(share.principal)?.length ?? 0;
  }

  /** How many principals of a database have operations waiting. */
  principalsWaiting(database: string): number {
    return this.byDatabase.get(database)?.size ?? 0;
  }

  add(share: Share, item: T): void {
    let principals = this.byDatabase.get(share.database);
    if (!principals) this.byDatabase.set(share.database, (principals = new Map()));
    let queue = principals.get(share.principal);
    if (!queue) principals.set(share.principal, (queue = []));
    queue.push({ share, item });
    this.waitingIn.set(share.database, this.waiting(share.database) + 1);
    this.total++;
  }

  /** Takes an item out wherever it is (its caller left); whether it was there. */
  remove(share: Share, item: T): boolean {
    const queue = this.byDatabase.get(share.database)?.get(share.principal);
    const at = queue?.findIndex((q) => q.item === item) ?? -1;
    if (!queue || at < 0) return false;
    queue.splice(at, 1);
    this.forget(share, queue);
    return true;
  }

  /** The next item by the rule above, among databases `mayRun` allows; undefined when none may run. */
  take(mayRun: (database: string) => boolean): { share: Share; item: T } | undefined {
    let database: string | undefined;
    for (const d of this.byDatabase.keys()) {
      if (!mayRun(d)) continue;
      if (database === undefined || this.served(d) < this.served(database)) database = d;
    }
    if (database === undefined) return undefined;
    const principals = this.byDatabase.get(database)!;
    let principal: string | undefined;
    for (const p of principals.keys()) {
      if (principal === undefined || this.served(`${database}\u0000${p}`) < this.served(`${database}\u0000${principal}`)) principal = p;
    }
    const queue = principals.get(principal!)!;
    const next = queue.shift()!;
    this.servedAt.set(database, ++this.turn);
    this.servedAt.set(`${database}\u0000${principal}`, this.turn);
    this.forget(next.share, queue);
    return next;
  }

  private served(key: string): number {
    return this.servedAt.get(key) ?? 0;
  }

  private forget(share: Share, queue: Queued<T>[]): void {
    this.total--;
    const left = this.waiting(share.database) - 1;
    if (left > 0) this.waitingIn.set(share.database, left);
    else this.waitingIn.delete(share.database);
    if (queue.length > 0) return;
    // Who has nothing waiting is forgotten, so memory follows the queue: coming back, it is served first.
    const principals = this.byDatabase.get(share.database)!;
    principals.delete(share.principal);
    this.servedAt.delete(`${share.database}\u0000${share.principal}`);
    if (principals.size > 0) return;
    this.byDatabase.delete(share.database);
    this.servedAt.delete(share.database);
  }
}

import { ObjectId, keyOf, parentOf } from './ids';

/** What a grant gives: read < write < admin, as a credential's own level. */
export type GrantLevel = 'read' | 'write' | 'admin';
export const GRANT_LEVELS: readonly GrantLevel[] = ['read', 'write', 'admin'];

/** Who a grant is to: a principal by name, or a role (a key's `roles`, a token's roles claim). */
export type Grantee = { principal: string } | { role: string };

/** What a grant is on; it reaches everything below it. */
export type Securable = { database: true } | { namespace: ObjectId } | { table: ObjectId };

export interface GrantFact {
  grantee: Grantee;
  securable: Securable;
  level: GrantLevel;
}

/** One grant issued or revoked, as the log recorded it: by whom, when, at which revision. */
export interface GrantChange extends GrantFact {
  issued: boolean;
  /** The event's `occurredAt`. */
  at: string;
  by?: string;
  revision: number;
}

const BIT: Record<GrantLevel, number> = { read: 1, write: 2, admin: 4 };

/** The rank (0 none, 1 read, 2 write, 3 admin) of the highest level a set of level bits holds. */
export function rankOfBits(bits: number): number {
  return bits & 4 ? 3 : bits & 2 ? 2 : bits & 1 ? 1 : 0;
}

export const RANK_LEVELS = ['none', 'read', 'write', 'admin'] as const;
export type RankLevel = (typeof RANK_LEVELS)[number];

export function granteeKey(g: Grantee): string {
  return 'principal' in g ? `p:${g.principal}` : `r:${g.role}`;
}

export function granteeOfKey(key: string): Grantee {
  return key.startsWith('p:') ? { principal: key.slice(2) } : { role: key.slice(2) };
}

export function securableKey(s: Securable): string {
  return 'database' in s ? 'd' : 'namespace' in s ? `n:${keyOf(s.namespace)}` : `t:${keyOf(s.table)}`;
}

export function securableOfKey(key: string): Securable {
  if (key === 'd') return { database: true };
  const id = key.length === 2 ? [] : key.slice(2).split('\u0000');
  return key[0] === 'n' ? { namespace: id } : { table: id };
}

/** The grantee keys of a caller: its own name and each of its roles. */
export function granteeKeysOf(principal: string, roles: readonly string[]): string[] {
  const keys = [`p:${principal}`];
  for (const r of roles) keys.push(`r:${r}`);
  return keys;
}

/**
 * The securables whose grants reach `s`, from the database down to `s` itself: the database,
 * every namespace on its path (the root namespace is the database), and a table itself. Each key
 * is one string made once per request, so a level is depth + 1 map lookups per grantee.
 */
export function securableChain(s: Securable): string[] {
  if ('database' in s) return ['d'];
  const namespace = 'namespace' in s ? s.namespace : parentOf(s.table);
  const chain = ['d'];
  let key = '';
  for (let i = 0; i < namespace.length; i++) {
    key = i === 0 ? namespace[0] : `${key}\u0000${namespace[i]}`;
    chain.push(`n:${key}`);
  }
  if ('table' in s) chain.push(`t:${keyOf(s.table)}`);
  return chain;
}

/**
 * The grants of one database, folded from its GrantIssued and GrantRevoked events: indexed by
 * securable for a caller's level (a lookup per step of the securable's path), by grantee for what
 * a caller can see, and every change in order with its time, so a level as of a past moment is
 * worked out from the changes (no read of the log).
 */
export class GrantsState {
  private readonly bySecurable = new Map<string, Map<string, number>>();
  private readonly byGrantee = new Map<string, Map<string, number>>();
  private readonly changes: GrantChange[] = [];
  /** Each change's grantee and securable keys and time, worked out once: a past level is folded from them. */
  private readonly changeKeys: Array<{ grantee: string; securable: string; at: number }> = [];
  private active = 0;

  /** Folds one change; a grant issued twice, or revoked when not held, changes nothing. */
  apply(change: GrantChange): void {
    const keys = { grantee: granteeKey(change.grantee), securable: securableKey(change.securable), at: Date.parse(change.at) };
    this.changes.push(change);
    this.changeKeys.push(keys);
    this.set(keys.grantee, keys.securable, BIT[change.level], change.issued);
  }

  private set(grantee: string, securable: string, bit: number, on: boolean): void {
    const held = this.bySecurable.get(securable)?.get(grantee) ?? 0;
    const next = on ? held | bit : held & ~bit;
    if (next === held) return;
    this.active += on ? 1 : -1;
    for (const [index, outer, inner] of [
      [this.bySecurable, securable, grantee],
      [this.byGrantee, grantee, securable],
    ] as const) {
      let m = index.get(outer);
      if (!m) index.set(outer, (m = new Map()));
      if (next === 0) {
        m.delete(inner);
        if (m.size === 0) index.delete(outer);
      } else m.set(inner, next);
    }
  }

  /** How many grants are held now. */
  get size(): number {
    return this.active;
  }

  /** Whether the grantee holds exactly this grant now. */
  holds(fact: GrantFact): boolean {
    return ((this.bySecurable.get(securableKey(fact.securable))?.get(granteeKey(fact.grantee)) ?? 0) & BIT[fact.level]) !== 0;
  }

  /** The highest rank any of the grantees holds on any securable of the chain (see securableChain). */
  rank(grantees: readonly string[], chain: readonly string[]): number {
    let bits = 0;
    for (const s of chain) {
      const holders = this.bySecurable.get(s);
      if (holders === undefined) continue;
      for (const g of grantees) bits |= holders.get(g) ?? 0;
    }
    return rankOfBits(bits);
  }

  /** The grants that reach the chain for any of the grantees. */
  reasons(grantees: readonly string[], chain: readonly string[]): GrantFact[] {
    const out: GrantFact[] = [];
    for (const s of chain) {
      const holders = this.bySecurable.get(s);
      if (holders === undefined) continue;
      for (const g of grantees) {
        const bits = holders.get(g) ?? 0;
        for (const level of GRANT_LEVELS) if (bits & BIT[level]) out.push({ grantee: granteeOfKey(g), securable: securableOfKey(s), level });
      }
    }
    return out;
  }

  /** Whether any of the grantees holds any grant in this database. */
  holdsAny(grantees: readonly string[]): boolean {
    for (const g of grantees) if (this.byGrantee.has(g)) return true;
    return false;
  }

  /** The securable keys the grantees hold grants on. */
  securablesOf(grantees: readonly string[]): string[] {
    const out: string[] = [];
    for (const g of grantees) for (const s of this.byGrantee.get(g)?.keys() ?? []) out.push(s);
    return out;
  }

  /**
   * Every grant held now, ordered by a key of each (its securable, grantee and level as JSON:
   * printable, so it serves as a page token).
   */
  all(): ListedGrant[] {
    const out: ListedGrant[] = [];
    for (const [s, holders] of this.bySecurable) for (const [g, bits] of holders) listed(out, s, g, bits);
    return sortedByKey(out);
  }

  /**
   * The grants held now by `grantees`, and those on the securables `on` accepts (by key), in the
   * order of `all`: what one caller may list, without making every grant of the database.
   */
  selected(grantees: readonly string[], on?: (securable: string) => boolean): ListedGrant[] {
    const out: ListedGrant[] = [];
    const own = new Set(grantees);
    for (const g of own) for (const [s, bits] of this.byGrantee.get(g) ?? []) if (!on?.(s)) listed(out, s, g, bits);
    if (on) {
      for (const [s, holders] of this.bySecurable) {
        if (on(s)) for (const [g, bits] of holders) listed(out, s, g, bits);
      }
    }
    return sortedByKey(out);
  }

  /** Every change folded, in log order. */
  history(): readonly GrantChange[] {
    return this.changes;
  }

  /** The grants as they were once every change recorded at or before `millis` was folded. */
  asOf(millis: number, keep?: (grantee: string, securable: string) => boolean): GrantsState {
    return this.folded(this.changes.length, (i) => this.changeKeys[i].at <= millis, keep);
  }

  /**
   * The grants (those `keep` keeps) as they were before each of a run of revisions asked in
   * increasing order from `first`: folded once up to it, then on by the changes between, so the
   * whole run costs the history once. The state answered is the walk's own, changed by the next ask.
   */
  walkBefore(first: number, keep: (grantee: string, securable: string) => boolean): (revision: number) => GrantsState {
    let next = this.changesThrough(first - 1);
    const past = this.folded(next, () => true, keep);
    return (revision) => {
      for (; next < this.changes.length && this.changes[next].revision < revision; next++) {
        const k = this.changeKeys[next];
        if (keep(k.grantee, k.securable)) past.apply(this.changes[next]);
      }
      return past;
    };
  }

  /**
   * Whether a change recorded after `revision` is on one of these securables (keys): if none is,
   * the grants on them as of `revision` are those held now. Only the changes after it are looked at.
   */
  changedAfter(revision: number, securables: readonly string[]): boolean {
    for (let i = this.changes.length - 1; i >= 0 && this.changes[i].revision > revision; i--) {
      if (securables.includes(this.changeKeys[i].securable)) return true;
    }
    return false;
  }

  /** How many changes were recorded up to `revision`: they are in log order, so the later ones are all at the end. */
  private changesThrough(revision: number): number {
    let end = this.changes.length;
    while (end > 0 && this.changes[end - 1].revision > revision) end--;
    return end;
  }

  private folded(count: number, take: (i: number) => boolean, keep?: (grantee: string, securable: string) => boolean): GrantsState {
    const past = new GrantsState();
    for (let i = 0; i < count; i++) {
      const k = this.changeKeys[i];
      if (!take(i) || (keep && !keep(k.grantee, k.securable))) continue;
      past.apply(this.changes[i]);
    }
    return past;
  }

  /** A copy a draft may change without touching this one. */
  copy(): GrantsState {
    return GrantsState.fromHistory(this.changes);
  }

  static fromHistory(changes: readonly GrantChange[]): GrantsState {
    const s = new GrantsState();
    for (const c of changes) s.apply(c);
    return s;
  }
}

export type ListedGrant = GrantFact & { key: string; securableKey: string };

function listed(out: ListedGrant[], s: string, g: string, bits: number): void {
  for (const level of GRANT_LEVELS) {
    if (bits & BIT[level]) out.push({ grantee: granteeOfKey(g), securable: securableOfKey(s), level, securableKey: s, key: JSON.stringify([s, g, BIT[level]]) });
  }
}

function sortedByKey(grants: ListedGrant[]): ListedGrant[] {
  return grants.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
}

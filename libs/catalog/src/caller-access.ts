import { CatalogView } from './catalog-view';
import { CatalogError, ErrorCode } from './errors';
import { GrantFact, RANK_LEVELS, RankLevel, Securable, securableChain, securableOfKey } from './grants';
import { ObjectId, displayId, keyOf, parentOf } from './ids';
import { namespaceNotFound } from './namespace-commands';
import { tableNotFound } from './table-commands';

const VERB = ['', 'read', 'write', 'administer'];
const RANK: Record<string, number> = { none: 0, read: 1, write: 2, admin: 3 };

export function rankOf(level: string | undefined): number {
  return level === undefined ? 0 : (RANK[level] ?? 0);
}

/** What a caller's access reads of a database: its grants (now, or as of a revision), and its namespaces. */
export type AccessView = Pick<CatalogView, 'grants' | 'namespace'>;

/**
 * What one caller may do in one database whose grants decide it: its credential's own level on
 * the database (`keyRank`), and the grants its name and roles hold in the database's state. A level
 * is depth + 1 lookups; the namespaces above the caller's grants (which it may see, to reach them)
 * are worked out once, on first need.
 */
export class CallerAccess {
  private above?: Set<string>;
  private granted?: { tables: ObjectId[]; namespaces: ObjectId[] };

  constructor(
    private readonly view: AccessView,
    readonly principal: string,
    readonly grantees: readonly string[],
    readonly keyRank: number,
  ) {}

  rankOn(s: Securable): number {
    if (this.keyRank === 3) return 3;
    return Math.max(this.keyRank, this.view.grants.rank(this.grantees, securableChain(s)));
  }

  levelOn(s: Securable): RankLevel {
    return RANK_LEVELS[this.rankOn(s)];
  }

  /** The grants that reach `s` for this caller. */
  reasons(s: Securable): GrantFact[] {
    return this.view.grants.reasons(this.grantees, securableChain(s));
  }

  readsTable(id: ObjectId): boolean {
    return this.rankOn({ table: id }) >= 1;
  }

  /** A namespace's name is the caller's to see when it may read it or it lies above one of its grants. */
  seesNamespace(id: ObjectId): boolean {
    return id.length === 0 || this.rankOn({ namespace: id }) >= 1 || this.aboveGrants().has(keyOf(id));
  }

  /**
   * What a table the caller may not read answers: what it would if it were missing. Its namespace
   * is named missing too unless the caller may see that it exists.
   */
  hiddenTable(id: ObjectId): CatalogError {
    const parent = parentOf(id);
    return this.view.namespace(parent) && this.seesNamespace(parent) ? tableNotFound(id) : namespaceNotFound(parent);
  }

  hiddenNamespace(id: ObjectId): CatalogError {
    return namespaceNotFound(id);
  }

  /** 403 code 15: the caller sees the object but holds less than `needed` on it. */
  refusal(needed: number, what: Securable): CatalogError {
    const name = 'database' in what ? 'the database' : 'namespace' in what ? `namespace '${displayId(what.namespace)}'` : `table '${displayId(what.table)}'`;
    return new CatalogError(ErrorCode.PermissionDenied, `${this.principal} may not ${VERB[needed]} ${name}: that needs ${RANK_LEVELS[needed]} on it`);
  }

  /** Throws what the caller is answered unless it holds `needed` on the table: 404 if it may not read it, 403 otherwise. */
  requireTable(id: ObjectId, needed: number): number {
    const rank = this.rankOn({ table: id });
    if (rank >= needed) return rank;
    if (rank === 0) throw this.hiddenTable(id);
    throw this.refusal(needed, { table: id });
  }

  /** The same for a namespace; `traverse`: seeing it is enough (listing, exists). */
  requireNamespace(id: ObjectId, needed: number, traverse = false): number {
    const rank = this.rankOn({ namespace: id });
    if (rank >= needed || (traverse && this.seesNamespace(id))) return Math.max(rank, 1);
    if (!this.seesNamespace(id)) throw this.hiddenNamespace(id);
    throw this.refusal(needed, { namespace: id });
  }

  /**
   * The tables and namespaces the caller's grants name (by name or role; the database's grant
   * aside): a list of what it may read starts from them, not from everything there is.
   */
  grantedObjects(): { tables: ObjectId[]; namespaces: ObjectId[] } {
    if (this.granted) return this.granted;
    const granted = { tables: [] as ObjectId[], namespaces: [] as ObjectId[] };
    for (const key of new Set(this.view.grants.securablesOf(this.grantees))) {
      const s = securableOfKey(key);
      if ('table' in s) granted.tables.push(s.table);
      else if ('namespace' in s) granted.namespaces.push(s.namespace);
    }
    this.granted = granted;
    return granted;
  }

  /**
   * Whether the caller administers the securable of this key by its grants: one of its admin
   * grants is on it or above it (undefined: it administers nothing by grants). Keys are compared
   * as text, so no grant of the database is made.
   */
  administers(): ((securableKey: string) => boolean) | undefined {
    const roots: string[] = [];
    for (const key of new Set(this.view.grants.securablesOf(this.grantees))) {
      if (this.view.grants.rank(this.grantees, [key]) === 3) roots.push(key);
    }
    if (roots.length === 0) return undefined;
    if (roots.includes('d')) return () => true;
    const below = roots.filter((r) => r[0] === 'n').map((r) => r.slice(2) + '\u0000');
    const exact = new Set(roots);
    return (key) => exact.has(key) || below.some((prefix) => key.startsWith(prefix, 2));
  }

  private aboveGrants(): Set<string> {
    if (this.above) return this.above;
    const above = new Set<string>(['']);
    for (const key of this.view.grants.securablesOf(this.grantees)) {
      if (key === 'd') continue;
      const id = key.slice(2).split('\u0000');
      // A namespace's own name is seen through its grant; a table's namespace is above it.
      const namespace = id.slice(0, -1);
      for (let i = 1; i <= namespace.length; i++) above.add(keyOf(namespace.slice(0, i)));
    }
    this.above = above;
    return above;
  }
}

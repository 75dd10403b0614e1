import {
  GrantFact,
  GrantsState,
  PageRequest,
  RANK_LEVELS,
  Securable,
  decideGrant,
  granteeKey,
  granteeKeysOf,
  invalidInput,
  rankOf,
  securableChain,
  takePage,
  validateGrant,
} from '@app/catalog';
import { ProjectionRegistry } from '@app/projections';
import { CatalogWriter } from './catalog-writer';
import { RequestContext } from './request-context';
import { stateFor } from './request-state';

/** What a grants list may be narrowed to: a grantee, and the grants that reach one securable. */
export interface GrantFilter {
  principal?: string;
  role?: string;
  reaching?: Securable;
}

/** What a caller may list: every grant, or its own (`grantees`: its name and roles) and those on what it administers. */
export type GrantScope = 'everything' | { grantees: readonly string[]; administers?: (securableKey: string) => boolean };

/**
 * Grants are catalog events like any other (GrantIssued, GrantRevoked in the database's log), so
 * their history, the replay digest and every replica's state follow them; a caller's level is read
 * from the folded state's grants (see GrantsState), a past one from the changes it keeps.
 */
export class GrantService {
  constructor(
    private readonly writer: CatalogWriter,
    private readonly projections: ProjectionRegistry,
  ) {}

  private async grants(ctx: RequestContext): Promise<GrantsState> {
    return (await stateFor(this.projections, ctx)).grants;
  }

  issue(ctx: RequestContext, fact: GrantFact) {
    return this.change(ctx, fact, true);
  }

  revoke(ctx: RequestContext, fact: GrantFact) {
    return this.change(ctx, fact, false);
  }

  private change(ctx: RequestContext, fact: GrantFact, issue: boolean) {
    validateGrant(fact, issue);
    const grant = { grantee: fact.grantee, securable: fact.securable, level: fact.level };
    return this.writer.execute(ctx, issue ? 'CreateGrant' : 'RevokeGrant', (view) => ({
      events: decideGrant(view, grant, issue),
      // Granting what is held (revoking what is not) records nothing and names no transaction.
      result: (transactionId) => (transactionId ? { transaction_id: transactionId } : {}),
    }));
  }

  /**
   * The grants held now (or at `atMillis`), in a stable order, narrowed by `filter` and by what the
   * caller may list: everything, or its own (`grantees`) and those on securables it `administers`.
   * Only the latter are made and folded, so a caller with few costs little however many there are.
   */
  async list(ctx: RequestContext, filter: GrantFilter, page: PageRequest, atMillis: number | undefined, scope: GrantScope) {
    const now = await this.grants(ctx);
    const own = scope === 'everything' ? undefined : new Set(scope.grantees);
    const mayList = scope === 'everything' ? undefined : (grantee: string, securable: string) => own!.has(grantee) || !!scope.administers?.(securable);
    const grants = atMillis === undefined ? now : now.asOf(atMillis, mayList);
    const grantee = filter.principal !== undefined ? granteeKey({ principal: filter.principal }) : filter.role !== undefined ? granteeKey({ role: filter.role }) : undefined;
    const reaching = filter.reaching ? new Set(securableChain(filter.reaching)) : undefined;
    const candidates = scope === 'everything' ? grants.all() : grants.selected(scope.grantees, scope.administers);
    const kept = (function* () {
      for (const g of candidates) {
        if (page.pageToken !== undefined && g.key <= page.pageToken) continue;
        if (grantee !== undefined && granteeKey(g.grantee) !== grantee) continue;
        if (reaching && !reaching.has(g.securableKey)) continue;
        yield g;
      }
    })();
    const result = takePage(kept, page.limit, (g) => g.key);
    return { grants: result.items.map(({ grantee: who, securable, level }) => ({ grantee: who, securable, level })), page_token: result.pageToken };
  }

  /**
   * A principal's level on a securable, now or as it was at `atMillis`: the highest of its keys'
   * own level on the database and what its grants (by name and by role) give, with each of them.
   * A past level is folded from the grant changes the state keeps, not read from the log; the keys'
   * level is the configuration's now (keys are not events).
   */
  async check(ctx: RequestContext, who: { principal: string; roles: readonly string[]; keyLevel?: string }, securable: Securable, atMillis?: number) {
    if (atMillis !== undefined && !Number.isFinite(atMillis)) throw invalidInput('at must be an RFC 3339 time');
    const now = await this.grants(ctx);
    const grantees = granteeKeysOf(who.principal, who.roles);
    const chain = securableChain(securable);
    // A past level is folded from the changes of these grantees on this chain alone.
    const [mine, reaching] = [new Set(grantees), new Set(chain)];
    const grants = atMillis === undefined ? now : now.asOf(atMillis, (g, s) => mine.has(g) && reaching.has(s));
    const keyRank = rankOf(who.keyLevel);
    const rank = Math.max(keyRank, grants.rank(grantees, chain));
    return {
      level: RANK_LEVELS[rank],
      because: [...(keyRank > 0 ? [{ key: who.keyLevel }] : []), ...grants.reasons(grantees, chain)],
      ...(atMillis !== undefined ? { at: new Date(atMillis).toISOString() } : {}),
    };
  }
}

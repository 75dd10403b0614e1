import { AccessView } from './caller-access';
import { CatalogView } from './catalog-view';
import { ObjectId } from './ids';
import { GrantLevel, Securable, securableChain, securableKey } from './grants';

/**
 * What holding a database's webhook subscriptions needs (creating, listing, describing, deleting
 * them, and having one's own delivered): admin on the database itself, since a subscription may
 * take every event of its log.
 */
export const HOLDING_SUBSCRIPTIONS: { readonly securable: Securable; readonly level: GrantLevel } = { securable: { database: true }, level: 'admin' };

/** The securables whose grants decide who holds subscriptions. */
const HOLDERS_CHAIN = securableChain(HOLDING_SUBSCRIPTIONS.securable);

/** Whether an event may change who holds the database's subscriptions: a grant issued or revoked on what that needs. */
export function changesHolders(event: { type: string; data: unknown }): boolean {
  if (event.type !== 'GrantIssued' && event.type !== 'GrantRevoked') return false;
  const securable = (event.data as { securable?: Securable }).securable;
  return securable !== undefined && HOLDERS_CHAIN.includes(securableKey(securable));
}

/**
 * The grants that decided who held subscriptions as each of a run of events was recorded, asked in
 * the order of their revisions from `first`: those before each, `view` being folded at least that
 * far. The view itself when no such grant changed since `first`; otherwise the past is folded once
 * for the run and walked forward (GrantsState.walkBefore), never again per event.
 */
export function holdersWalk(view: CatalogView, first: number): (revision: number) => AccessView {
  if (!view.grants.changedAfter(first - 1, HOLDERS_CHAIN)) return () => view;
  const before = view.grants.walkBefore(first, (_grantee, securable) => HOLDERS_CHAIN.includes(securable));
  const namespace = (id: ObjectId) => view.namespace(id);
  return (revision) => ({ grants: before(revision), namespace });
}

import { AccessView } from './caller-access';
import { CatalogView } from './catalog-view';
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
 * The grants that decided who held subscriptions as the event at `revision` was recorded: those
 * before it, `view` being folded at least that far. The view itself unless such a grant changed
 * since, so only the events around a change pay for folding the past.
 */
export function holdersBefore(view: CatalogView, revision: number): AccessView {
  if (!view.grants.changedAfter(revision - 1, HOLDERS_CHAIN)) return view;
  return {
    grants: view.grants.asOfRevision(revision - 1, (_grantee, securable) => HOLDERS_CHAIN.includes(securable)),
    namespace: (id) => view.namespace(id),
  };
}

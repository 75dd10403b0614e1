import { ANONYMOUS, Authenticator, Principal, SERVICE, levelIn } from '@app/auth';
import type { SubscriptionCreators } from '@app/application';
import { CallerAccess, CreatorCredential, HOLDING_SUBSCRIPTIONS, WebhookSubscriptionState, rankOf } from '@app/catalog';
import { accessByGrants, principalRankOn } from './principal-access';

/**
 * Whether a principal may hold the database's webhook subscriptions: asked of the caller of each
 * subscription route (operations/subscriptions.extensions.ts), and before each delivery of a
 * subscription's creator, as the same principal would be judged if it asked to create it now.
 */
export function mayHoldSubscriptions(principal: Principal, database: string, access: CallerAccess | undefined): boolean {
  return principalRankOn(principal, database, access, HOLDING_SUBSCRIPTIONS.securable) >= rankOf(HOLDING_SUBSCRIPTIONS.level);
}

/** The credential a subscription records of its creator; none for the anonymous caller of a server without authentication. */
export function creatorCredential(principal: Principal, database: string): CreatorCredential | undefined {
  switch (principal.via) {
    case 'api-key':
      return { kind: 'api-key' };
    case 'jwt': {
      const level = levelIn(principal, database);
      return { kind: 'token', ...(level ? { level } : {}), roles: [...principal.roles] };
    }
    case 'service':
      return { kind: 'service' };
    default:
      return undefined;
  }
}

/**
 * Judges a subscription's creator as a request of it would be judged now: by each configured key
 * of its principal (its level and roles as configured now; none left, no admin), by what its token
 * carried while tokens are still accepted, and by the database's grants as `view` holds them.
 */
export function subscriptionCreators(authenticator: Authenticator): SubscriptionCreators {
  return {
    mayHold: (database, subscription, view) => principalsOf(authenticator, subscription, database).some((p) => mayHoldSubscriptions(p, database, accessByGrants(p, database, view))),
  };
}

/** Who the creator could be judged as: one principal per credential it could present now. */
function principalsOf(authenticator: Authenticator, s: WebhookSubscriptionState, database: string): readonly Principal[] {
  // Without authentication every caller holds everything, as the creator did.
  if (!authenticator.enabled) return [ANONYMOUS];
  if (s.createdBy === undefined) return [];
  const credential = s.createdWith;
  if (credential?.kind === 'service') return [SERVICE];
  const keys = credential === undefined || credential.kind === 'api-key' ? authenticator.keyPrincipals(s.createdBy) : [];
  // Made before credentials were recorded: its principal's keys, or a token of its name, whose scopes and roles are not known.
  const token = credential === undefined ? { level: undefined, roles: [] } : credential.kind === 'token' ? credential : undefined;
  if (!token || !authenticator.acceptsTokens) return keys;
  return [...keys, { name: s.createdBy, via: 'jwt', grants: new Map(token.level ? [[database, token.level]] : []), roles: token.roles }];
}

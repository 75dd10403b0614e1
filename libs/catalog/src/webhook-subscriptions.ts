import { GrantLevel } from './grants';
import { ObjectId, isPrefix } from './ids';

/**
 * The kind of credential a subscription's creator presented, so that whether it may still hold the
 * subscription can be judged again at each delivery. A key is looked up again among the configured
 * keys by its principal (their levels and roles are the configuration's at the time); a token is
 * not held after its request, so the level it carried in the database and its roles are kept.
 */
export type CreatorCredential = { kind: 'api-key' } | { kind: 'token'; level?: GrantLevel; roles: string[] } | { kind: 'service' };

/** What a webhook subscription was created with, as WebhookSubscriptionCreated records it (never its secret). */
export interface WebhookSubscriptionSpec {
  subscriptionId: string;
  url: string;
  /** Only events of these types are delivered; absent: every type. */
  eventTypes?: string[];
  /** Only events of this namespace and what lies inside it; absent: the whole database. */
  namespace?: ObjectId;
  /** The first revision of the log it receives; absent: the events after its own creation. */
  fromRevision?: number;
  /** Absent: made without authentication configured, or before the credential was recorded. */
  createdWith?: CreatorCredential;
}

export interface WebhookSubscriptionState extends WebhookSubscriptionSpec {
  createdAt: string;
  createdBy?: string;
  /** The revision of its WebhookSubscriptionCreated. */
  createdRevision: number;
  status: 'active' | 'paused';
  /** Set once paused: why, when, and the revision it could not deliver. */
  paused?: { reason: string; at: string; revision: number };
}

/**
 * The database's webhook subscriptions, folded from their events. Small (a handful per database),
 * so a draft copies the whole map the first time it changes one.
 */
export class WebhookSubscriptions {
  private readonly byId: Map<string, WebhookSubscriptionState>;

  constructor(entries: Iterable<WebhookSubscriptionState> = []) {
    this.byId = new Map([...entries].map((s) => [s.subscriptionId, s]));
  }

  get(id: string): WebhookSubscriptionState | undefined {
    return this.byId.get(id);
  }

  all(): WebhookSubscriptionState[] {
    return [...this.byId.values()];
  }

  get size(): number {
    return this.byId.size;
  }

  put(s: WebhookSubscriptionState): void {
    this.byId.set(s.subscriptionId, s);
  }

  remove(id: string): void {
    this.byId.delete(id);
  }

  copy(): WebhookSubscriptions {
    return new WebhookSubscriptions(this.byId.values());
  }
}

/** Whether a subscription takes an event: its types, and its namespace (the event's table or namespace inside it). */
export function subscriptionTakes(s: WebhookSubscriptionSpec, event: { type: string; data: unknown }): boolean {
  if (s.eventTypes && !s.eventTypes.includes(event.type)) return false;
  if (!s.namespace) return true;
  // A subscription's own record names the namespace it filters on, not one it is about: it is the database's.
  if (event.type.startsWith('WebhookSubscription')) return false;
  const data = event.data as { table?: ObjectId; newTable?: ObjectId; namespace?: ObjectId; securable?: { table?: ObjectId; namespace?: ObjectId } };
  const ids = [data.table, data.newTable, data.namespace, data.securable?.table, data.securable?.namespace].filter((id): id is ObjectId => Array.isArray(id));
  return ids.some((id) => isPrefix(s.namespace!, id));
}

/** The last revision a subscription counts as delivered before its first delivery: it starts after it. */
export function revisionBeforeFirst(s: Pick<WebhookSubscriptionState, 'fromRevision' | 'createdRevision'>): number {
  return (s.fromRevision ?? s.createdRevision + 1) - 1;
}

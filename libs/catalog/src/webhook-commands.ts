import { CatalogView } from './catalog-view';
import { CatalogError, ErrorCode, invalidInput } from './errors';
import { CATALOG_EVENT_TYPES, CatalogEvent } from './events';
import { WebhookSubscriptionSpec } from './webhook-subscriptions';

/** Subscriptions one database may hold: each is a publisher with its own checkpoint and lease. */
export const MAX_WEBHOOK_SUBSCRIPTIONS = 64;
const MAX_URL_LENGTH = 2048;

/**
 * Refuses a subscription that could not be delivered, or that would write credentials into the
 * log: http(s) only, no user-info in the URL, known event types, a revision from 0 on.
 * Where the URL points is checked at each delivery (it may resolve elsewhere later).
 */
export function validateWebhookSubscription(spec: WebhookSubscriptionSpec): WebhookSubscriptionSpec {
  if (typeof spec.url !== 'string' || spec.url.length > MAX_URL_LENGTH) throw invalidInput(`url must be a string of at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(spec.url);
  } catch {
    throw invalidInput('url is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidInput('url must be http:// or https://');
  if (url.username || url.password) throw invalidInput('url must not carry credentials: receivers verify the webhook-signature header instead');
  if (spec.eventTypes) {
    if (spec.eventTypes.length === 0) throw invalidInput('event_types, when given, must name at least one event type');
    for (const t of spec.eventTypes) {
      if (!(CATALOG_EVENT_TYPES as readonly string[]).includes(t)) throw invalidInput(`event_types: '${t}' is not an event type of the log`);
    }
  }
  if (spec.fromRevision !== undefined && (!Number.isSafeInteger(spec.fromRevision) || spec.fromRevision < 0)) throw invalidInput('from_revision must be a revision: an integer >= 0');
  return spec;
}

export function decideCreateWebhookSubscription(view: CatalogView, spec: WebhookSubscriptionSpec): CatalogEvent[] {
  validateWebhookSubscription(spec);
  if (view.webhooks.get(spec.subscriptionId)) throw invalidInput(`webhook subscription '${spec.subscriptionId}' exists already`);
  if (view.webhooks.size >= MAX_WEBHOOK_SUBSCRIPTIONS) {
    throw new CatalogError(ErrorCode.Throttling, `the database holds ${MAX_WEBHOOK_SUBSCRIPTIONS} webhook subscriptions, the most it may; delete one first`);
  }
  return [{ type: 'WebhookSubscriptionCreated', data: spec }];
}

/** Deleting what is not there records nothing. */
export function decideDeleteWebhookSubscription(view: CatalogView, subscriptionId: string): CatalogEvent[] {
  return view.webhooks.get(subscriptionId) ? [{ type: 'WebhookSubscriptionDeleted', data: { subscriptionId } }] : [];
}

/** A subscription already paused (or deleted meanwhile) records nothing more. */
export function decidePauseWebhookSubscription(view: CatalogView, subscriptionId: string, reason: string, revision: number): CatalogEvent[] {
  const s = view.webhooks.get(subscriptionId);
  if (!s || s.status === 'paused') return [];
  return [{ type: 'WebhookSubscriptionPaused', data: { subscriptionId, reason: reason.slice(0, 512), revision } }];
}

export function webhookSubscriptionNotFound(subscriptionId: string): CatalogError {
  return invalidInput(`no webhook subscription '${subscriptionId}' in this database`);
}

import { randomUUID } from 'node:crypto';
import {
  CatalogError,
  CatalogView,
  CreatorCredential,
  ErrorCode,
  ObjectId,
  PageRequest,
  WebhookSubscriptionState,
  invalidInput,
  revisionBeforeFirst,
  takePage,
  decideCreateWebhookSubscription,
  decideDeleteWebhookSubscription,
  decidePauseWebhookSubscription,
  validateWebhookSubscription,
  webhookSubscriptionNotFound,
} from '@app/catalog';
import { EventStore } from '@app/event-store';
import { ProjectionRegistry, catalogStreamOf } from '@app/projections';
import { CatalogWriter, unavailableAs503 } from './catalog-writer';
import { FeedLedger, WebhookDelivery, WebhookRefusedError } from './change-feed/feed-ports';
import { webhookSecret } from './change-feed/webhook-secrets';
import { SubscriptionCreators, suspension } from './change-feed/subscription-creators';
import { webhookSinkName } from './change-feed/webhook-target';
import { RequestContext } from './request-context';
import { stateFor } from './request-state';

export interface WebhookSubscriptionRequest {
  url: string;
  eventTypes?: string[];
  namespace?: ObjectId;
  fromRevision?: number;
  /** The caller's credential, judged again at each delivery (see SubscriptionCreators). */
  createdWith?: CreatorCredential;
}

/**
 * Webhook subscriptions of a database's change feed: events of its log (WebhookSubscriptionCreated,
 * Deleted, Paused), so every replica's state and the history know them. Their delivery state
 * (checkpoint, last error) is the change feed's, read from its ledger.
 */
export class WebhookService {
  constructor(
    private readonly writer: CatalogWriter,
    private readonly projections: ProjectionRegistry,
    private readonly store: EventStore,
    private readonly ledger: FeedLedger | null,
    private readonly secretKey: string | undefined,
    /** Where deliveries may go (the SSRF guard), asked at creation too; absent without webhooks configured. */
    private readonly delivery?: Pick<WebhookDelivery, 'check'>,
  ) {}

  private key(): string {
    if (!this.secretKey) {
      throw new CatalogError(ErrorCode.Unsupported, 'webhook subscriptions are not configured on this server: the operator sets WEBHOOK_SECRET_KEY (their signing secrets derive from it)');
    }
    return this.secretKey;
  }

  async create(ctx: RequestContext, request: WebhookSubscriptionRequest) {
    const key = this.key();
    validateWebhookSubscription({ subscriptionId: '', url: request.url, eventTypes: request.eventTypes, fromRevision: request.fromRevision });
    // Refused now when it points inside already; every delivery checks again (DNS answers change).
    await this.delivery?.check(request.url).catch((e: unknown) => {
      throw e instanceof WebhookRefusedError ? invalidInput(`url refused: ${e.message}`) : e;
    });
    const subscriptionId = randomUUID();
    const spec = {
      subscriptionId,
      url: request.url,
      ...(request.eventTypes ? { eventTypes: request.eventTypes } : {}),
      ...(request.namespace ? { namespace: request.namespace } : {}),
      ...(request.fromRevision !== undefined ? { fromRevision: request.fromRevision } : {}),
      ...(request.createdWith ? { createdWith: request.createdWith } : {}),
    };
    return this.writer.execute(ctx, 'CreateWebhookSubscription', (view) => ({
      events: decideCreateWebhookSubscription(view, spec),
      result: (transactionId) => ({
        ...subscriptionJson({ ...spec, createdAt: '', createdRevision: -1, status: 'active' }, ctx.delimiter),
        // Answered once: the log never holds it, and it can be derived again only with the server's key.
        secret: webhookSecret(key, ctx.database, subscriptionId),
        transaction_id: transactionId,
      }),
    }));
  }

  delete(ctx: RequestContext, subscriptionId: string) {
    return this.writer.execute(ctx, 'DeleteWebhookSubscription', (view) => ({
      events: decideDeleteWebhookSubscription(view, subscriptionId),
      result: (transactionId) => (transactionId ? { transaction_id: transactionId } : {}),
    }));
  }

  /** The change feed gave up on its receiver: recorded as the server's own act. */
  async pause(database: string, subscriptionId: string, reason: string, revision: number): Promise<void> {
    await this.writer.execute({ database, context: {}, delimiter: '$', service: true }, 'PauseWebhookSubscription', (view) => ({
      events: decidePauseWebhookSubscription(view, subscriptionId, reason, revision),
      result: () => undefined,
    }));
  }

  /**
   * In the order they were made; a page token is the revision of the last one's creation. An
   * active one whose creator may no longer hold it is told as suspended (`creators`).
   */
  async list(ctx: RequestContext, page: PageRequest = {}, creators?: SubscriptionCreators) {
    const after = page.pageToken === undefined ? -1 : Number(page.pageToken);
    if (!Number.isSafeInteger(after)) throw invalidInput(`page_token '${page.pageToken}' is not one a page of subscriptions answered`);
    const state = await stateFor(this.projections, ctx);
    const ordered = state.webhooks
      .all()
      .filter((s) => s.createdRevision > after)
      .sort((a, b) => a.createdRevision - b.createdRevision);
    const result = takePage(ordered, page.limit, (s) => String(s.createdRevision));
    return { subscriptions: result.items.map((s) => subscriptionJson(s, ctx.delimiter, suspendedIn(state, ctx.database, s, creators))), page_token: result.pageToken };
  }

  /** One subscription with its delivery: the revision it reached, its lag in events and seconds, its last error, whether it is suspended. */
  async describe(ctx: RequestContext, subscriptionId: string, creators?: SubscriptionCreators) {
    // The projection is caught up to the stream's head: its revision is the head.
    const [state, checkpoint] = await Promise.all([
      stateFor(this.projections, ctx),
      this.ledger ? this.ledger.checkpoint(ctx.database, webhookSinkName(subscriptionId)).catch(() => undefined) : Promise.resolve(undefined),
    ]);
    const s = state.webhooks.get(subscriptionId);
    if (!s) throw webhookSubscriptionNotFound(subscriptionId);
    const head = state.revision;
    const stream = catalogStreamOf(ctx.database);
    const delivered = checkpoint?.revision ?? revisionBeforeFirst(s);
    const lagEvents = Math.max(0, head - delivered);
    let lagSeconds = 0;
    if (lagEvents > 0) {
      const [oldest] = await unavailableAs503(() => this.store.readStream(stream, { fromRevision: delivered + 1, maxCount: 1 }));
      if (oldest) lagSeconds = Math.max(0, (Date.now() - oldest.created.getTime()) / 1000);
    }
    return {
      ...subscriptionJson(s, ctx.delimiter, suspendedIn(state, ctx.database, s, creators)),
      delivered_revision: delivered,
      head_revision: head,
      lag_events: lagEvents,
      lag_seconds: Math.round(lagSeconds * 1000) / 1000,
      ...(checkpoint === undefined && this.ledger ? { delivery_state: 'unknown: Redis does not answer' } : {}),
      ...(checkpoint?.lastError ? { last_error: checkpoint.lastError } : {}),
      ...(checkpoint?.failingSince ? { failing_since: new Date(checkpoint.failingSince).toISOString() } : {}),
    };
  }
}

/** Why an active subscription delivers nothing now: its creator may not hold it (the change feed passes its events over meanwhile). */
function suspendedIn(view: CatalogView, database: string, s: WebhookSubscriptionState, creators: SubscriptionCreators | undefined) {
  return s.status === 'active' && creators && !creators.mayHold(database, s, view) ? suspension(s, database) : undefined;
}

function subscriptionJson(s: WebhookSubscriptionState, delimiter: string, suspended?: { reason: string; to_resume: string }) {
  return {
    subscription_id: s.subscriptionId,
    url: s.url,
    ...(s.eventTypes ? { event_types: s.eventTypes } : {}),
    ...(s.namespace ? { namespace: s.namespace.join(delimiter) } : {}),
    ...(s.fromRevision !== undefined ? { from_revision: s.fromRevision } : {}),
    status: suspended ? 'suspended' : s.status,
    ...(suspended ? { suspended } : {}),
    ...(s.createdRevision >= 0 ? { created_at: s.createdAt, created_revision: s.createdRevision } : {}),
    ...(s.createdBy ? { created_by: s.createdBy } : {}),
    ...(s.paused ? { paused: { reason: s.paused.reason, at: s.paused.at, revision: s.paused.revision } } : {}),
  };
}

import { Webhook } from 'standardwebhooks';
import { CatalogView, WebhookSubscriptionState, changesHolders, holdersWalk, revisionBeforeFirst, subscriptionTakes } from '@app/catalog';
import { RecordedEvent } from '@app/event-store';
import { structuredBody, toCloudEvent } from './cloud-event';
import { PublishOutcome, WebhookDelivery } from './feed-ports';
import { SinkTarget } from './sink-runner';
import { SubscriptionCreators, suspension } from './subscription-creators';
import { webhookSecret } from './webhook-secrets';

/** Sinks of webhook subscriptions are named by this prefix and the subscription's id. */
export const WEBHOOK_SINK_PREFIX = 'webhook:';

export function webhookSinkName(subscriptionId: string): string {
  return `${WEBHOOK_SINK_PREFIX}${subscriptionId}`;
}

export interface WebhookTargetSettings {
  delivery: WebhookDelivery;
  secretKey: string;
  /** How long a subscription may fail before it is paused. */
  giveUpMs: number;
  /** Records the pause (WebhookSubscriptionPaused in the database's log). */
  pause(database: string, subscriptionId: string, reason: string, revision: number): Promise<void>;
  /** Whether a subscription's creator may still hold it: its deliveries go on only while it may. */
  creators: SubscriptionCreators;
}

/** What a target needs of its database's feed besides the events: the state, folded at least through a revision, and the log it tells of a suspension in. */
export interface WebhookTargetDatabase {
  stateThrough(revision: number): Promise<CatalogView>;
  log(level: 'info' | 'warn', message: string): void;
}

/**
 * One webhook subscription as a sink: each event it takes POSTed alone in CloudEvents' structured
 * mode, signed as Standard Webhooks says (`webhook-id` the CloudEvent's id, the same on every retry,
 * so a receiver can drop repeats), one at a time, in order.
 */
export class WebhookTarget implements SinkTarget {
  readonly name: string;
  readonly backoffMs = { min: 250, max: 10_000 };
  private readonly signer: Webhook;
  /** Whether the last batch found its creator no longer holding it (told in the log when it changes). */
  private suspended = false;

  constructor(
    private readonly database: string,
    private readonly subscription: WebhookSubscriptionState,
    private readonly settings: WebhookTargetSettings,
    private readonly source: WebhookTargetDatabase,
  ) {
    this.name = webhookSinkName(subscription.subscriptionId);
    this.signer = new Webhook(webhookSecret(settings.secretKey, database, subscription.subscriptionId));
  }

  async start(): Promise<number> {
    return revisionBeforeFirst(this.subscription);
  }

  /**
   * Its creator is judged once a batch, on the state folded through it: an event goes out only
   * while the creator may hold the subscription now and could as the event was recorded. What is
   * recorded while it may not is passed over (the checkpoint moves past it), not kept for later.
   */
  async deliver(events: readonly RecordedEvent[], valid: () => boolean): Promise<PublishOutcome> {
    const view = await this.source.stateThrough(events[events.length - 1].revision).catch((e: unknown) => {
      throw new Error(`the database's state could not be read to judge the subscription's creator: ${e instanceof Error ? e.message : String(e)}`);
    });
    const holdsNow = this.settings.creators.mayHold(this.database, this.subscription, view);
    this.noteSuspension(!holdsNow);
    // Events from before it was made (a from_revision) are judged as it was made.
    const judgedAt = (revision: number) => Math.max(revision, this.subscription.createdRevision + 1);
    const holders = holdsNow ? holdersWalk(view, judgedAt(events[0].revision)) : undefined;
    const heldAsOf = (revision: number) => !!holders && this.settings.creators.mayHold(this.database, this.subscription, holders(judgedAt(revision)));
    let held = heldAsOf(events[0].revision);
    for (let i = 0; i < events.length; i++) {
      if (!valid()) return { published: i };
      const e = events[i];
      // Only a grant on the database moves who holds subscriptions: judged again after one.
      if (holders && i > 0 && changesHolders(events[i - 1])) held = heldAsOf(e.revision);
      if (!held || !subscriptionTakes(this.subscription, e)) continue;
      const event = toCloudEvent(this.database, e);
      const body = structuredBody(event);
      const now = new Date();
      try {
        await this.settings.delivery.post(this.subscription.url, body, {
          'content-type': 'application/cloudevents+json; charset=utf-8',
          'webhook-id': event.id,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': this.signer.sign(event.id, now, body),
        });
      } catch (error) {
        return { published: i, error };
      }
    }
    return { published: events.length };
  }

  private noteSuspension(suspended: boolean): void {
    if (suspended === this.suspended) return;
    this.suspended = suspended;
    const where = `change feed of '${this.database}': ${this.name}`;
    if (suspended) this.source.log('warn', `${where} is suspended: ${suspension(this.subscription, this.database).reason}`);
    else this.source.log('info', `${where} resumes: its creator is an admin of the database again`);
  }

  async giveUp(failingSince: number, reason: string, revision: number): Promise<boolean> {
    if (Date.now() - failingSince < this.settings.giveUpMs) return false;
    const seconds = Math.round((Date.now() - failingSince) / 1000);
    await this.settings.pause(this.database, this.subscription.subscriptionId, `failing for ${seconds} s (WEBHOOK_GIVE_UP_SECONDS): ${reason}`, revision);
    return true;
  }
}

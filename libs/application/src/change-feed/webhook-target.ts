import { Webhook } from 'standardwebhooks';
import { WebhookSubscriptionState, revisionBeforeFirst, subscriptionTakes } from '@app/catalog';
import { RecordedEvent } from '@app/event-store';
import { structuredBody, toCloudEvent } from './cloud-event';
import { PublishOutcome, WebhookDelivery } from './feed-ports';
import { SinkTarget } from './sink-runner';
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

  constructor(
    private readonly database: string,
    private readonly subscription: WebhookSubscriptionState,
    private readonly settings: WebhookTargetSettings,
  ) {
    this.name = webhookSinkName(subscription.subscriptionId);
    this.signer = new Webhook(webhookSecret(settings.secretKey, database, subscription.subscriptionId));
  }

  async start(): Promise<number> {
    return revisionBeforeFirst(this.subscription);
  }

  async deliver(events: readonly RecordedEvent[], valid: () => boolean): Promise<PublishOutcome> {
    for (let i = 0; i < events.length; i++) {
      if (!valid()) return { published: i };
      const e = events[i];
      if (!subscriptionTakes(this.subscription, e)) continue;
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

  async giveUp(failingSince: number, reason: string, revision: number): Promise<boolean> {
    if (Date.now() - failingSince < this.settings.giveUpMs) return false;
    const seconds = Math.round((Date.now() - failingSince) / 1000);
    await this.settings.pause(this.database, this.subscription.subscriptionId, `failing for ${seconds} s (WEBHOOK_GIVE_UP_SECONDS): ${reason}`, revision);
    return true;
  }
}

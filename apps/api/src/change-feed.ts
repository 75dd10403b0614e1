import { Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import { ChangeFeed, FeedLedger, WebhookService } from '@app/application';
import type { Authenticator } from '@app/auth';
import { AppConfig } from '@app/config';
import { FEED_LEDGER, HttpWebhookDelivery, NatsSink, WEBHOOK_DELIVERY } from '@app/nest-wiring';
import type { AppServices } from './operations/operation-services';
import { subscriptionCreators } from './auth/subscription-holders';

/**
 * Starts the change feed in this API process when one is configured (CHANGE_FEED_NATS_URL,
 * WEBHOOK_SECRET_KEY): every replica runs it, and per database the holder of its lease publishes.
 * Nothing is built otherwise. Stopped when the server closes, before the event store is.
 */
export function installChangeFeed(app: NestFastifyApplication, config: AppConfig, services: AppServices, authenticator: Authenticator): ChangeFeed | undefined {
  const ledger = app.get<FeedLedger | null>(FEED_LEDGER);
  if (!ledger) return undefined;
  const log = new Logger('change-feed');
  const settings = config.changeFeed;
  const nats = settings.natsUrl ? new NatsSink(settings.natsUrl, settings.natsStream) : undefined;
  const delivery = app.get<HttpWebhookDelivery | null>(WEBHOOK_DELIVERY);
  const webhooks = app.get(WebhookService);
  const feed = new ChangeFeed(services.store, services.projections, ledger, {
    owner: randomUUID(),
    leaseMs: settings.leaseMs,
    nats,
    webhooks:
      delivery && settings.webhookSecretKey
        ? {
            delivery,
            secretKey: settings.webhookSecretKey,
            giveUpMs: settings.webhookGiveUpMs,
            pause: (d, id, reason, revision) => webhooks.pause(d, id, reason, revision),
            // Judged on this process's credentials: replicas of one deployment are configured alike.
            creators: subscriptionCreators(authenticator),
          }
        : undefined,
    log: (level, message) => (level === 'info' ? log.log(message) : level === 'warn' ? log.warn(message) : log.error(message)),
  });
  services.metrics.watchChangeFeed(() => feed.lags());
  feed.start();
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onClose', async () => {
      await feed.close();
      await nats?.close();
    });
  return feed;
}

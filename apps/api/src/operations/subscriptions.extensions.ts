import type { FastifyRequest } from 'fastify';
import { createSubscriptionBody, listSubscriptionsBody, subscriptionIdBody } from '../http/body-schemas';
import { requireAdminOn } from './grant-gate';
import { operation } from './operation';

/** A database's subscriptions see all of its log: only its admins may hold or read them. */
function requireDatabaseAdmin(request: FastifyRequest, database: string): void {
  requireAdminOn(request, database, { database: true }, 'manage webhook subscriptions: that needs admin on the database');
}

/** Webhook subscriptions to the database's change feed (README, "The change feed"). */
export const SUBSCRIPTION_EXTENSIONS = [
  operation({
    extension: 'CreateSubscription',
    doc: {
      tag: 'Change feed',
      summary:
        "Subscribe a URL to the database's change feed: each event of its log (of `event_types`, inside `namespace`, when given) POSTed as a CloudEvent signed per Standard Webhooks, in order, from `from_revision` (default: the events after this one). Answers the signing secret, once. Recorded as WebhookSubscriptionCreated. Needs admin on the database and WEBHOOK_SECRET_KEY on the server.",
    },
    method: 'POST',
    path: '/v1/subscriptions/create',
    access: 'admin',
    body: createSubscriptionBody,
    subject: 'none',
    handle: ({ ctx, body, raw }, s) => {
      requireDatabaseAdmin(raw, ctx.database);
      return s.webhooks.create(ctx, {
        url: body.url,
        ...(body.event_types ? { eventTypes: body.event_types } : {}),
        ...(body.namespace ? { namespace: body.namespace } : {}),
        ...(body.from_revision != null ? { fromRevision: body.from_revision } : {}),
      });
    },
  }),
  operation({
    extension: 'ListSubscriptions',
    doc: { tag: 'Change feed', summary: "The database's webhook subscriptions in the order they were made (never their secrets), paged (limit, page_token). Needs admin on the database." },
    method: 'POST',
    path: '/v1/subscriptions/list',
    access: 'admin',
    body: listSubscriptionsBody,
    subject: 'none',
    handle: ({ ctx, http, raw }, s) => {
      requireDatabaseAdmin(raw, ctx.database);
      return s.webhooks.list(ctx, http.page());
    },
  }),
  operation({
    extension: 'DescribeSubscription',
    doc: {
      tag: 'Change feed',
      summary:
        'One webhook subscription with its delivery: the revision delivered, its lag in events and seconds, its last error and since when it fails, and why it was paused. Needs admin on the database.',
    },
    method: 'POST',
    path: '/v1/subscriptions/describe',
    access: 'admin',
    body: subscriptionIdBody,
    subject: 'none',
    handle: ({ ctx, body, raw }, s) => {
      requireDatabaseAdmin(raw, ctx.database);
      return s.webhooks.describe(ctx, body.subscription_id);
    },
  }),
  operation({
    extension: 'DeleteSubscription',
    doc: { tag: 'Change feed', summary: 'Delete a webhook subscription: delivery stops. Recorded as WebhookSubscriptionDeleted; deleting what is not there records nothing.' },
    method: 'POST',
    path: '/v1/subscriptions/delete',
    access: 'admin',
    body: subscriptionIdBody,
    subject: 'none',
    handle: ({ ctx, body, raw }, s) => {
      requireDatabaseAdmin(raw, ctx.database);
      return s.webhooks.delete(ctx, body.subscription_id);
    },
  }),
];

import { CatalogError, ErrorCode } from '@app/catalog';
import type { FastifyRequest } from 'fastify';
import { createSubscriptionBody, listSubscriptionsBody, subscriptionIdBody } from '../http/body-schemas';
import { creatorCredential, mayHoldSubscriptions, subscriptionCreators } from '../auth/subscription-holders';
import { OperationServices, operation } from './operation';

/** A database's subscriptions see all of its log: only its admins may hold or read them. */
function requireDatabaseAdmin(request: FastifyRequest, database: string): void {
  if (request.principal && mayHoldSubscriptions(request.principal, database, request.callerAccess)) return;
  throw new CatalogError(ErrorCode.PermissionDenied, `${request.principal?.name ?? 'this caller'} may not manage webhook subscriptions: that needs admin on the database`);
}

/** Whose subscriptions are suspended: judged on the configured credentials (absent without an edge's authenticator). */
function creatorsOf(s: OperationServices) {
  return s.authenticator ? subscriptionCreators(s.authenticator) : undefined;
}

/** Webhook subscriptions to the database's change feed (README, "The change feed"). */
export const SUBSCRIPTION_EXTENSIONS = [
  operation({
    extension: 'CreateSubscription',
    doc: {
      tag: 'Change feed',
      summary:
        "Subscribe a URL to the database's change feed: each event of its log (of `event_types`, inside `namespace`, when given) POSTed as a CloudEvent signed per Standard Webhooks, in order, from `from_revision` (default: the events after this one). Answers the signing secret, once. Recorded as WebhookSubscriptionCreated. Delivered only while its creator is an admin of the database (suspended otherwise: what is recorded meanwhile is never delivered). Needs admin on the database and WEBHOOK_SECRET_KEY on the server.",
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
        ...(raw.principal ? { createdWith: creatorCredential(raw.principal, ctx.database) } : {}),
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
      return s.webhooks.list(ctx, http.page(), creatorsOf(s));
    },
  }),
  operation({
    extension: 'DescribeSubscription',
    doc: {
      tag: 'Change feed',
      summary:
        'One webhook subscription with its delivery: the revision delivered, its lag in events and seconds, its last error and since when it fails, why it was paused, or why it is suspended (its creator is no longer an admin of the database: its events are passed over until it is again) and what to do. Needs admin on the database.',
    },
    method: 'POST',
    path: '/v1/subscriptions/describe',
    access: 'admin',
    body: subscriptionIdBody,
    subject: 'none',
    handle: ({ ctx, body, raw }, s) => {
      requireDatabaseAdmin(raw, ctx.database);
      return s.webhooks.describe(ctx, body.subscription_id, creatorsOf(s));
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

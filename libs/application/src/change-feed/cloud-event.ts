import { CloudEvent } from 'cloudevents';
import { EventMetadata, ObjectId, displayId } from '@app/catalog';
import { RecordedEvent } from '@app/event-store';

/** The CloudEvent id of a database's event: the same event always has the same id, wherever it is published from. */
function cloudEventId(database: string, revision: number): string {
  return `${database}:${revision}`;
}

/** What a CloudEvent is about: the table, namespace, grant's securable, transaction or subscription. */
function subjectOf(e: RecordedEvent): string | undefined {
  const data = e.data as { table?: ObjectId; namespace?: ObjectId; securable?: { table?: ObjectId; namespace?: ObjectId; database?: true }; transactionId?: string; subscriptionId?: string };
  if (e.type.startsWith('WebhookSubscription') && data.subscriptionId) return `subscriptions/${data.subscriptionId}`;
  const id = data.table ?? data.namespace ?? data.securable?.table ?? data.securable?.namespace;
  if (id) return displayId(id);
  if (data.securable?.database) return '';
  if (e.type === 'TransactionAltered' && data.transactionId) return `transactions/${data.transactionId}`;
  if (data.subscriptionId) return `subscriptions/${data.subscriptionId}`;
  return undefined;
}

/** The data of a change-feed event: the log's event data with who, how and under which transaction. */
export interface ChangeEventData {
  operation: string;
  transaction_id: string;
  principal?: string;
  context?: Record<string, string>;
  data: unknown;
}

/**
 * A log event as a CloudEvent 1.0: `id` `<database>:<revision>`, `source` `/databases/<database>`,
 * `type` `lance.catalog.<EventType>`, `subject` the table or namespace id (delimited with `$`),
 * `time` when it was recorded, the extension `sequence` its revision. Built without the package's
 * per-event schema check (the tests validate the shape); one object per event published.
 */
export function toCloudEvent(database: string, e: RecordedEvent): CloudEvent<ChangeEventData> {
  const m = (e.metadata ?? {}) as EventMetadata;
  const subject = subjectOf(e);
  return new CloudEvent<ChangeEventData>(
    {
      specversion: '1.0',
      id: cloudEventId(database, e.revision),
      source: `/databases/${database}`,
      type: `lance.catalog.${e.type}`,
      ...(subject !== undefined && subject !== '' ? { subject } : {}),
      time: m.occurredAt ?? e.created.toISOString(),
      datacontenttype: 'application/json',
      sequence: e.revision,
      data: {
        operation: m.operation,
        transaction_id: m.transactionId,
        ...(m.principal ? { principal: m.principal } : {}),
        ...(m.context && Object.keys(m.context).length ? { context: m.context } : {}),
        data: e.data,
      },
    },
    false,
  );
}

/** Structured mode: the whole CloudEvent as one JSON document (content type application/cloudevents+json). */
export function structuredBody(event: CloudEvent<ChangeEventData>): string {
  return JSON.stringify(event);
}

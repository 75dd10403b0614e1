import { CloudEvent } from 'cloudevents';
import { EventMetadata, ObjectId, displayId } from '@app/catalog';
import { RecordedEvent } from '@app/event-store';

/**
 * The `sequence` extension is a string that MUST order lexicographically: the revision in decimal,
 * zero-padded to the width of the largest 64-bit position, so that `"…10"` comes after `"…9"`.
 */
const SEQUENCE_WIDTH = 20;

function sequenceOf(revision: number): string {
  return String(revision).padStart(SEQUENCE_WIDTH, '0');
}

/** What a CloudEvent is about: the table, namespace, grant's securable, transaction or subscription. */
function subjectOf(e: RecordedEvent): string | undefined {
  const data = e.data as { table?: ObjectId; namespace?: ObjectId; securable?: { table?: ObjectId; namespace?: ObjectId; database?: true }; transactionId?: string; subscriptionId?: string };
  if (e.type.startsWith('WebhookSubscription') && data.subscriptionId) return `subscriptions/${data.subscriptionId}`;
  // A job's progress names its table too, but is about its transaction.
  if (e.type === 'TransactionAltered' && data.transactionId) return `transactions/${data.transactionId}`;
  const id = data.table ?? data.namespace ?? data.securable?.table ?? data.securable?.namespace;
  if (id) return displayId(id);
  if (data.securable?.database) return '';
  if (data.subscriptionId) return `subscriptions/${data.subscriptionId}`;
  return undefined;
}

/** The data of a change-feed event: the log's event data with who, how and under which transaction. */
export interface ChangeEventData {
  operation: string;
  transaction_id: string;
  principal?: string;
  context?: Record<string, string>;
  data?: unknown;
  /** In place of `data`, for an event larger than its sink takes (see tooLargeFor). */
  data_too_large?: { bytes: number; limit: number; history: string };
}

/**
 * A log event as a CloudEvent 1.0: `id` the event's own id in the log, `source`
 * `/databases/<database>`, `type` `lance.catalog.<EventType>`, `subject` the table or namespace id
 * (delimited with `$`), `time` when it was recorded, the extension `sequence` its revision. The id
 * is the stored event's, not its revision: export, import and migrate keep it, so an event
 * published again is the same event; a log rebuilt by recover, or restored from an older backup,
 * gives its revisions to events of its own, which must not pass for the old log's (CloudEvents:
 * source + id unique for each distinct event; JetStream drops a message whose id it has seen).
 * Built without the package's per-event schema check (the tests validate the shape); one object
 * per event published.
 */
export function toCloudEvent(database: string, e: RecordedEvent): CloudEvent<ChangeEventData> {
  const m = (e.metadata ?? {}) as EventMetadata;
  const subject = subjectOf(e);
  return new CloudEvent<ChangeEventData>(
    {
      specversion: '1.0',
      id: e.id,
      source: `/databases/${database}`,
      type: `lance.catalog.${e.type}`,
      ...(subject !== undefined && subject !== '' ? { subject } : {}),
      time: m.occurredAt ?? e.created.toISOString(),
      datacontenttype: 'application/json',
      sequence: sequenceOf(e.revision),
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

/**
 * An event whose CloudEvent is larger than the sink takes (NATS's max_payload: a RegisterTable of a
 * table with thousands of versions lists them all), sent in its place: the same id, type, subject,
 * time and sequence, and in its data, in place of the event's own, `data_too_large` saying how large
 * it was and where to read it whole (its transaction's history).
 */
export function tooLargeFor(event: CloudEvent<ChangeEventData>, bytes: number, limit: number): CloudEvent<ChangeEventData> {
  const { data: _whole, ...rest } = event.data!;
  return event.cloneWith({ data: { ...rest, data_too_large: { bytes, limit, history: `/v1/history/transaction/${rest.transaction_id}` } } as ChangeEventData }, false);
}

/** Structured mode: the whole CloudEvent as one JSON document (content type application/cloudevents+json). */
export function structuredBody(event: CloudEvent<ChangeEventData>): string {
  return JSON.stringify(event);
}

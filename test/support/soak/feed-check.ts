import { Webhook } from 'standardwebhooks';
import { Api } from '../http';
import { jetStreamMessages, revisionOf } from '../jetstream';
import { WebhookReceiver } from '../webhook-receiver';
import { settled, sleep } from './context';

export interface FeedVerdict {
  /** Revisions of the log (0..head). */
  revisions: number;
  /** Of them, how many JetStream holds once each and in order from the start. */
  nats: number;
  /** Of them, how many the webhook receiver got, first seen in order from the start. */
  webhook: number;
  /** Deliveries the receiver got again (at least once). */
  webhookRepeats: number;
  problems: string[];
}

/** The longest prefix of 0, 1, 2, ... that `sequence` holds in order. */
function inOrderPrefix(sequence: number[]): number {
  let n = 0;
  for (const s of sequence) if (s === n) n++;
  return n;
}

/**
 * The change feed's promise, once every fault has ended: every revision of the log reaches
 * JetStream once and in order (its dedup drops republished messages) and the webhook receiver at
 * least once, first seen in order, each delivery signed with the subscription's secret.
 */
export async function checkFeed(api: Api, nats: { url: string; stream: string }, receiver: WebhookReceiver, path: string, secret: string, waitMs: number): Promise<FeedVerdict> {
  const head = await settled('history head', async () => {
    const r = await api.get('/v1/history/database?limit=1');
    if (r.status !== 200) throw new Error(`${r.status} ${r.text.slice(0, 300)}`);
    return r.body.head as number;
  });
  const revisions = head + 1;
  const deadline = Date.now() + waitMs;
  const sightings = () => receiver.received.filter((r) => r.path === path).map((r) => revisionOf(JSON.parse(r.body)));
  let stored: number[] = [];
  for (;;) {
    stored = (await jetStreamMessages(nats.url, nats.stream, 'default').catch(() => [])).map((m) => revisionOf(m.event));
    const webhook = inOrderPrefix([...new Set(sightings())]);
    if ((stored.length >= revisions && webhook >= revisions) || Date.now() > deadline) break;
    await sleep(1000);
  }
  const problems: string[] = [];
  const natsInOrder = inOrderPrefix(stored);
  if (stored.length !== revisions || natsInOrder !== revisions) {
    problems.push(`change feed: JetStream holds ${stored.length} messages for ${revisions} revisions, ${natsInOrder} once and in order from revision 0 (the first out of place: ${JSON.stringify(stored.slice(natsInOrder, natsInOrder + 5))})`);
  }
  const deliveries = receiver.received.filter((r) => r.path === path);
  const verifier = new Webhook(secret);
  const unsigned = deliveries.filter((r) => {
    try {
      verifier.verify(r.body, r.headers as Record<string, string>);
      return false;
    } catch {
      return true;
    }
  }).length;
  if (unsigned) problems.push(`change feed: ${unsigned} webhook deliveries whose signature does not verify`);
  const first = [...new Set(sightings())];
  const webhook = inOrderPrefix(first);
  if (webhook < revisions) problems.push(`change feed: the receiver got ${webhook} of ${revisions} revisions in order (then ${JSON.stringify(first.slice(webhook, webhook + 5))})`);
  return { revisions, nats: natsInOrder, webhook, webhookRepeats: deliveries.length - first.length, problems };
}

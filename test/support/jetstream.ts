import { connect } from 'nats';

export interface StoredMessage {
  seq: number;
  subject: string;
  msgId?: string;
  contentType?: string;
  event: Record<string, unknown>;
}

/**
 * The revision a CloudEvent's `sequence` extension carries: a string of 20 decimal digits (the
 * extension's lexicographic order), refused in any other form.
 */
export function revisionOf(event: { sequence?: unknown }): number {
  const sequence = event.sequence;
  if (typeof sequence !== 'string' || !/^\d{20}$/.test(sequence)) throw new Error(`sequence ${JSON.stringify(sequence)} is not 20 decimal digits`);
  return Number(sequence);
}

/** Every message a JetStream stream holds on a database's subjects, in the stream's order. */
export async function jetStreamMessages(url: string, stream: string, database: string): Promise<StoredMessage[]> {
  const nc = await connect({ servers: url, timeout: 5000 });
  try {
    const jsm = await nc.jetstreamManager();
    const info = await jsm.streams.info(stream).catch(() => undefined);
    if (!info || info.state.messages === 0) return [];
    const out: StoredMessage[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const m = await jsm.streams.getMessage(stream, { seq }).catch(() => undefined);
      if (!m || !m.subject.startsWith(`lance.catalog.${database}.`)) continue;
      out.push({
        seq,
        subject: m.subject,
        msgId: m.header?.get('Nats-Msg-Id'),
        contentType: m.header?.get('content-type'),
        event: JSON.parse(new TextDecoder().decode(m.data)),
      });
    }
    return out;
  } finally {
    await nc.close();
  }
}

/** Polls until `check` holds (or the time is up, then answers the last value for the test to judge). */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, ms = 20_000, everyMs = 200): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await read();
  while (!check(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, everyMs));
    value = await read();
  }
  return value;
}

import { join } from 'node:path';
import { EsdbEventStore } from '../src';
import { describeEventStoreConformance, spawnAckingWriter } from '../src/conformance/event-store-conformance';

// Runs only where EVENTSTORE_URL points at an EventStoreDB server (jest.config.js leaves it out otherwise).
const url = process.env.EVENTSTORE_URL!;

describeEventStoreConformance('EventStoreDB', {
  open: async () => new EsdbEventStore(url),
  spawnWriter: (stream, count) =>
    spawnAckingWriter(join(__dirname, '../src/conformance/acking-writer.ts'), [url, '/tmp', stream, String(count)], {}),
});

import { createEventStore } from '../create-event-store';

/** Child process for the durability test: appends one event at a time and acknowledges each. */
async function main(): Promise<void> {
  const [setting, dataDir, stream, count] = process.argv.slice(2);
  const store = createEventStore(setting, dataDir);
  let expected: number | 'no_stream' = 'no_stream';
  for (let i = 0; i < Number(count); i++) {
    const result = await store.append(stream, [{ type: 'Durable', data: { i } }], expected);
    expected = result.nextExpectedRevision;
    process.stdout.write(`ack ${result.nextExpectedRevision}\n`);
  }
  await store.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

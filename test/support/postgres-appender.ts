import { PostgresEventStore } from '@app/event-store';

/**
 * A process that appends to the PostgreSQL event store at `url` without pause, `concurrency`
 * appends in flight at once, each to a stream of its own; it prints `appending` once its appends
 * go through, so a test can stop it (SIGSTOP) in the middle of its work.
 */
async function main(url: string, concurrency: number): Promise<void> {
  const store = new PostgresEventStore(url);
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, lane) => {
      for (let revision = -1; ; revision++) {
        await store.append(`paused-${process.pid}-${lane}`, [{ type: 'Appended', data: { revision } }], revision < 0 ? 'no_stream' : revision);
        if (++done === concurrency * 20) process.stdout.write('appending\n');
      }
    }),
  );
}

main(process.argv[2], Number(process.argv[3] ?? 8)).catch((e) => {
  process.stderr.write(`${(e as Error)?.stack ?? e}\n`);
  process.exit(1);
});

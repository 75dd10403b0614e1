import { createHash } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import { loadConfig } from '@app/config';
import { EventStore, SqliteEventStore, embeddedStoreFile, isOperatorStream, recordOperatorEvent } from '@app/event-store';
import { importVerb } from '../src/archive-verbs';
import { MAX_LINE_BYTES, checkArchive, exportLog, importArchive } from '../src/log-archive';
import { CommandFailure } from '../src/exit-codes';

/** The archive format on the embedded store: what export writes, what import checks and loads. */
describe('log archive', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lance-archive-'));
  let source: EventStore;
  const archive = join(dir, 'log.ndjson.gz');

  beforeAll(async () => {
    source = new SqliteEventStore(join(dir, 'source.sqlite3'));
    await source.append('catalog-a', [1, 2, 3].map((n) => ({ type: 'NamespaceCreated', data: { n }, metadata: { occurredAt: '2026-01-01T00:00:00Z' } })), 'no_stream');
    await source.append('catalog-b', [{ type: 'NamespaceCreated', data: { n: 'b' } }], 'no_stream');
    await recordOperatorEvent(source, { type: 'WritesResumed', data: { reason: 'left out of archives' } });
    await source.append('catalog-a', [{ type: 'NamespaceCreated', data: { n: 4 } }], 2);
    await exportLog(source, archive, () => undefined);
  });
  afterAll(() => source.close());

  const archiveLines = () => gunzipSync(readFileSync(archive)).toString('utf8').split('\n');
  const rewritten = (edit: (lines: string[]) => string[]) => {
    const file = join(dir, `edited-${Math.random()}.ndjson.gz`);
    writeFileSync(file, gzipSync(edit(archiveLines()).join('\n')));
    return file;
  };
  /** The archive's events edited, under a trailer that counts and seals them again, as one made to pass the checksum would be. */
  const resealed = (edit: (events: Array<Record<string, unknown>>) => void) =>
    rewritten((l) => {
      const events = l.slice(1, -2).map((line) => JSON.parse(line) as Record<string, unknown>);
      edit(events);
      const lines = [l[0], ...events.map((e) => JSON.stringify(e))];
      const sha256 = createHash('sha256').update(lines.map((line) => `${line}\n`).join('')).digest('hex');
      return [...lines, JSON.stringify({ end: true, events: events.length, sha256 }), ''];
    });
  /** `lance-catalog import --from file` into an empty embedded store: how it ended, and how many events the store then holds. */
  const imported = async (file: string) => {
    const dataDir = mkdtempSync(join(dir, 'target-'));
    let ending: { exitCode: number; message?: string };
    try {
      ending = { exitCode: (await importVerb.run({ values: { from: file }, config: loadConfig({ DATA_DIR: dataDir }), json: true })).exitCode };
    } catch (e) {
      expect(e).toBeInstanceOf(CommandFailure);
      ending = { exitCode: (e as CommandFailure).exitCode, message: (e as Error).message };
    }
    const store = new SqliteEventStore(embeddedStoreFile(dataDir));
    try {
      return { ...ending, events: (await store.readAll()).length };
    } finally {
      await store.close();
    }
  };
  const refusal = async (file: string) => {
    try {
      await checkArchive(file);
    } catch (e) {
      expect(e).toBeInstanceOf(CommandFailure);
      return [(e as CommandFailure).exitCode, (e as Error).message];
    }
    throw new Error('the archive was accepted');
  };

  it('loads into another store event for event, ids and revisions kept, without the operator\'s stream', async () => {
    const check = await checkArchive(archive);
    expect(check).toMatchObject({ events: 5, streams: 2, source: 'embedded' });
    const target = new SqliteEventStore(join(dir, 'target.sqlite3'));
    try {
      expect(await importArchive(archive, target, () => undefined, check)).toBe(5);
      const strip = (events: Awaited<ReturnType<EventStore['readAll']>>) => events.map(({ id, streamId, revision, type, data, metadata }) => ({ id, streamId, revision, type, data, metadata }));
      const expected = strip(await source.readAll()).filter((e) => !isOperatorStream(e.streamId));
      expect(strip(await target.readAll())).toEqual(expected);
    } finally {
      await target.close();
    }
  });

  it('fails a load whose file changed after its check, at its end, rather than loading what was not checked', async () => {
    const check = await checkArchive(archive);
    const changed = resealed((events) => ((events[0].data as Record<string, unknown>).n = 99));
    const target = new SqliteEventStore(join(dir, `changed-${Math.random()}.sqlite3`));
    try {
      const failure = await importArchive(changed, target, () => undefined, check).then(() => undefined, (e: unknown) => e);
      expect(failure).toBeInstanceOf(CommandFailure);
      expect([(failure as CommandFailure).exitCode, (failure as Error).message]).toEqual([4, expect.stringMatching(/^the archive changed between its check and its load/)]);
    } finally {
      await target.close();
    }
  });

  it('refuses a changed event, a missing end, lines after the end, a revision skipped, a foreign file, and streams and events no export holds', async () => {
    expect(await refusal(rewritten((l) => [l[0], l[1].replace('"n":1', '"n":7'), ...l.slice(2)]))).toEqual([4, expect.stringMatching(/checksum/)]);
    expect(await refusal(rewritten((l) => l.slice(0, 4)))).toEqual([4, expect.stringMatching(/cut short/)]);
    expect(await refusal(rewritten((l) => [...l.slice(0, -1), l[1]]))).toEqual([4, expect.stringMatching(/after its last line/)]);
    expect(await refusal(rewritten((l) => [l[0], ...l.slice(2)]))).toEqual([4, expect.stringMatching(/jumps to revision 1/)]);
    expect(await refusal(rewritten((l) => ['{"format":"something else"}', ...l.slice(1)]))).toEqual([4, expect.stringMatching(/not a lance-catalog export/)]);
    // What no export writes: an operator's word, a load's bracket, a stream no database name makes, an event type the catalog has not.
    const line = (change: (e: Record<string, unknown>) => void) => (l: string[]) => {
      const e = JSON.parse(l[1]) as Record<string, unknown>;
      change(e);
      return [l[0], JSON.stringify(e), ...l.slice(2)];
    };
    for (const stream of ['lance-catalog-operator', 'lance-catalog-load', 'catalog-x y', 'catalog-p\r\nPUB evil.subject 2', 'elsewhere']) {
      expect(await refusal(rewritten(line((e) => (e.stream = stream))))).toEqual([4, expect.stringMatching(/is no database's log; an export holds nothing else/)]);
    }
    expect(await refusal(rewritten(line((e) => (e.type = 'EventStoreMoved'))))).toEqual([4, expect.stringMatching(/"EventStoreMoved" is no event type of the catalog/)]);
    const notGzip = join(dir, 'plain.txt');
    writeFileSync(notGzip, 'hello');
    expect(await refusal(notGzip)).toEqual([4, expect.stringMatching(/gzip/)]);
  });

  it('refuses an event id given twice, naming it and both lines, before anything is written', async () => {
    // Sealed again untouched, the archive loads: its five events and the load's two brackets.
    expect(await imported(resealed(() => undefined))).toEqual({ exitCode: 0, events: 7 });
    const idOnLine = (line: number) => JSON.parse(archiveLines()[line - 1]).id as string;
    // Line 2 is catalog-a's first event, line 3 its second, line 5 catalog-b's first.
    const reused = (from: number, to: number) => (events: Array<Record<string, unknown>>) => (events[to - 2].id = events[from - 2].id);
    for (const [first, second] of [[2, 3], [2, 5]]) {
      const id = idOnLine(first);
      expect(await imported(resealed(reused(first, second)))).toEqual({
        exitCode: 4,
        message: `lines ${first} and ${second} hold events of the same id ${id}: every event of a log has an id of its own; import an archive 'lance-catalog export' wrote`,
        events: 0,
      });
    }
    // What no store makes: an id that is not a UUID, or one in capitals (the same UUID to EventStoreDB as its lowercase).
    for (const id of ['e1', idOnLine(2).toUpperCase()]) {
      expect(await refusal(resealed((events) => (events[1].id = id)))).toEqual([4, `line 3: event id ${JSON.stringify(id)} is not a UUID as the stores make them; an export holds nothing else`]);
    }
  });

  it('refuses a line longer than MAX_LINE_BYTES once it passes the bound, holding no more of it, before anything is written', async () => {
    // A line of 8 GiB in a file of 9 MB: one gzip member of a MiB of 'a', written 8,192 times (gunzip reads members on as one stream).
    const file = join(dir, 'long-line.ndjson.gz');
    const [header] = archiveLines();
    const mebibyte = gzipSync(Buffer.alloc(1024 * 1024, 'a'));
    async function* members(): AsyncGenerator<Buffer> {
      yield gzipSync(`${header}\n{"stream":"catalog-a","revision":0,"id":"`);
      for (let i = 0; i < 8192; i++) yield mebibyte;
    }
    await pipeline(Readable.from(members()), createWriteStream(file));
    const peakBefore = process.resourceUsage().maxRSS;
    expect(await imported(file)).toEqual({
      exitCode: 4,
      message: `line 2 of the archive is longer than ${MAX_LINE_BYTES / 1024 / 1024} MiB, the most an event's line may take: the file is damaged or is not an export of this catalog; import an archive 'lance-catalog export' wrote`,
      events: 0,
    });
    // The process's peak (maxRSS, in KiB) grew by what the bound lets a line hold, not by the line.
    expect((process.resourceUsage().maxRSS - peakBefore) * 1024).toBeLessThan(2 * MAX_LINE_BYTES);
  });
});

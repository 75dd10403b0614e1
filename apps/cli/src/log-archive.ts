import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { Readable, pipeline as chain } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { EventStore, isOperatorStream } from '@app/event-store';
import { CATALOG_EVENT_TYPES, DATABASE_NAME, UuidSlots } from '@app/catalog';
import { databaseOfStream } from '@app/projections';
import { LineTooLong, boundedLines } from './bounded-lines';
import { CommandFailure, EXIT } from './exit-codes';
import { CarriedEvent, OrderedAppender } from './ordered-appender';

/**
 * The archive: gzip-compressed NDJSON. The first line says what it is, each next line is one event
 * in the log's global order, and the last line counts them and holds the SHA-256 of every line
 * before it (as written, newlines included): a file cut short, edited or from elsewhere is refused.
 */
export const ARCHIVE_FORMAT = 'lance-catalog-log';
const ARCHIVE_VERSION = 1;
const PAGE = 5000;
// What one line may hold in memory: 64 times the largest event a request makes (JSON_BODY_LIMIT's 4 MiB), or a RegisterTable of 1.3 million versions.
export const MAX_LINE_BYTES = 256 * 1024 * 1024;

interface Header {
  format: string;
  version: number;
  exported_at: string;
  source: string;
  up_to_position: string;
}
interface EventLine {
  stream: string;
  revision: number;
  id: string;
  type: string;
  data: unknown;
  metadata: unknown;
  created: string;
}
interface Trailer {
  end: true;
  events: number;
  sha256: string;
}

export interface ExportSummary {
  events: number;
  upToPosition: string;
  sha256: string;
  bytes: number;
}

/**
 * Writes every database's events up to the store's head as it is when the export starts, while the
 * store keeps serving: to a temporary file next to `file`, renamed over it once complete.
 */
export async function exportLog(store: EventStore, file: string, onProgress: (events: number) => void): Promise<ExportSummary> {
  const upTo = await store.headPosition();
  const hash = createHash('sha256');
  let events = 0;
  async function* lines(): AsyncGenerator<string> {
    const emit = (line: string) => {
      const text = `${line}\n`;
      hash.update(text);
      return text;
    };
    const header: Header = { format: ARCHIVE_FORMAT, version: ARCHIVE_VERSION, exported_at: new Date().toISOString(), source: store.kind, up_to_position: upTo.toString() };
    yield emit(JSON.stringify(header));
    let after: bigint | undefined;
    while (upTo > 0n) {
      const page = await store.readAll({ afterPosition: after, maxCount: PAGE });
      let chunk = '';
      let end = page.length < PAGE;
      for (const e of page) {
        if (e.position > upTo) {
          end = true;
          break;
        }
        after = e.position;
        if (isOperatorStream(e.streamId)) continue;
        const line: EventLine = { stream: e.streamId, revision: e.revision, id: e.id, type: e.type, data: e.data, metadata: e.metadata, created: e.created.toISOString() };
        chunk += emit(JSON.stringify(line));
        events++;
      }
      if (chunk) yield chunk;
      onProgress(events);
      if (end || after === upTo) break;
    }
    const trailer: Trailer = { end: true, events, sha256: hash.copy().digest('hex') };
    yield `${JSON.stringify(trailer)}\n`;
  }
  const partial = `${file}.partial-${process.pid}`;
  try {
    await pipeline(Readable.from(lines()), createGzip(), createWriteStream(partial));
    await rename(partial, file);
  } catch (e) {
    await rm(partial, { force: true });
    throw e;
  }
  return { events, upToPosition: upTo.toString(), sha256: hash.digest('hex'), bytes: (await stat(file)).size };
}

export interface ArchiveCheck {
  events: number;
  streams: number;
  sha256: string;
  source: string;
  exportedAt: string;
}

/** The archive's lines, decompressed, each refused once longer than MAX_LINE_BYTES, before more of it is held. */
async function* archiveLines(file: string): AsyncGenerator<string> {
  // Failures of the file's stream reach the lines' reader through the gunzip stream.
  const input = chain(createReadStream(file), createGunzip(), () => undefined);
  try {
    yield* boundedLines(input, MAX_LINE_BYTES);
  } catch (e) {
    if (e instanceof LineTooLong) {
      throw new CommandFailure(
        EXIT.badArchive,
        `line ${e.line} of the archive is longer than ${MAX_LINE_BYTES / 1024 / 1024} MiB, the most an event's line may take: the file is damaged or is not an export of this catalog; import an archive 'lance-catalog export' wrote`,
      );
    }
    if ((e as { code?: string }).code === 'ENOENT') throw new CommandFailure(EXIT.usage, `no archive at ${file}`);
    throw new CommandFailure(EXIT.badArchive, `the archive cannot be read as gzip-compressed NDJSON (${(e as Error).message})`);
  } finally {
    input.destroy();
  }
}

function parseLine(line: string, number: number): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw new CommandFailure(EXIT.badArchive, `line ${number} of the archive is not JSON`);
  }
}

const EVENT_TYPES = new Set<string>(CATALOG_EVENT_TYPES);

function eventOf(value: unknown, number: number): CarriedEvent {
  const e = value as Partial<EventLine> | null;
  if (
    !e ||
    typeof e !== 'object' ||
    typeof e.stream !== 'string' ||
    typeof e.id !== 'string' ||
    typeof e.type !== 'string' ||
    !Number.isSafeInteger(e.revision) ||
    (e.revision as number) < 0 ||
    !('data' in e)
  ) {
    throw new CommandFailure(EXIT.badArchive, `line ${number} of the archive is not an event`);
  }
  // An export holds databases' logs and nothing else: no operator's word (a freeze, a move, a load)
  // and no stream a database name cannot make (such a name would reach the change feed's subjects).
  const database = databaseOfStream(e.stream);
  if (database === undefined || !DATABASE_NAME.test(database)) {
    throw new CommandFailure(EXIT.badArchive, `line ${number}: stream ${JSON.stringify(e.stream.slice(0, 100))} is no database's log; an export holds nothing else`);
  }
  if (!EVENT_TYPES.has(e.type)) throw new CommandFailure(EXIT.badArchive, `line ${number}: ${JSON.stringify(e.type.slice(0, 100))} is no event type of the catalog`);
  return { streamId: e.stream, revision: e.revision as number, id: e.id, type: e.type, data: e.data, metadata: e.metadata ?? {} };
}

/**
 * An event's id is its own: every store makes its events' ids as random UUIDs (and EventStoreDB
 * takes nothing else), and the change feed publishes each event under its id, so a second event
 * under one id is a repeat that JetStream drops (within its duplicate window) and a webhook
 * receiver may.
 */
function requireOwnId(ids: UuidSlots, id: string, number: number): void {
  const known = ids.size;
  const slot = ids.add(id);
  if (slot < 0) throw new CommandFailure(EXIT.badArchive, `line ${number}: event id ${JSON.stringify(id.slice(0, 100))} is not a UUID as the stores make them; an export holds nothing else`);
  // Events are added in their lines' order from line 2, after the header: slot k is line k + 2.
  if (ids.size === known) {
    throw new CommandFailure(EXIT.badArchive, `lines ${slot + 2} and ${number} hold events of the same id ${id}: every event of a log has an id of its own; import an archive 'lance-catalog export' wrote`);
  }
}

/**
 * Reads the whole archive without writing anything: its header, every event (each stream's
 * revisions contiguous from 0, each id given once), and the trailer's count and checksum against
 * what was read.
 */
export async function checkArchive(file: string, onProgress: (events: number) => void = () => undefined): Promise<ArchiveCheck> {
  const hash = createHash('sha256');
  const next = new Map<string, number>();
  const ids = new UuidSlots();
  let header: Header | undefined;
  let trailer: Trailer | undefined;
  let events = 0;
  let number = 0;
  for await (const line of archiveLines(file)) {
    number++;
    if (trailer) throw new CommandFailure(EXIT.badArchive, `the archive goes on after its last line (line ${number})`);
    const value = parseLine(line, number);
    if (!header) {
      header = value as Header;
      if (header?.format !== ARCHIVE_FORMAT) throw new CommandFailure(EXIT.badArchive, 'the file is not a lance-catalog export (its first line does not say so)');
      if (header.version !== ARCHIVE_VERSION) throw new CommandFailure(EXIT.badArchive, `the archive's format version ${header.version} is not one this command reads (${ARCHIVE_VERSION})`);
    } else if ((value as Trailer)?.end === true) {
      trailer = value as Trailer;
      continue;
    } else {
      const event = eventOf(value, number);
      requireOwnId(ids, event.id, number);
      const expected = next.get(event.streamId) ?? 0;
      if (event.revision !== expected) {
        throw new CommandFailure(EXIT.badArchive, `line ${number}: stream '${event.streamId}' jumps to revision ${event.revision} where ${expected} comes next`);
      }
      next.set(event.streamId, expected + 1);
      events++;
      if (events % 10_000 === 0) onProgress(events);
    }
    hash.update(`${line}\n`);
  }
  if (!header) throw new CommandFailure(EXIT.badArchive, 'the archive is empty');
  if (!trailer) throw new CommandFailure(EXIT.badArchive, 'the archive ends before its last line: it was cut short');
  const sha256 = hash.digest('hex');
  if (trailer.events !== events) throw new CommandFailure(EXIT.badArchive, `the archive says it holds ${trailer.events} events, and holds ${events}`);
  if (trailer.sha256 !== sha256) throw new CommandFailure(EXIT.badArchive, 'the archive\'s checksum does not match its content: it was changed or damaged');
  onProgress(events);
  return { events, streams: next.size, sha256, source: header.source, exportedAt: header.exported_at };
}

/**
 * Appends a checked archive's events to the store, in order. The file is read again, so what is
 * read is hashed again: a file changed since its check fails the load at its end (the store's load
 * is then left unfinished, and no server starts on it) rather than loading unchecked events.
 */
export async function importArchive(file: string, store: EventStore, onProgress: (events: number) => void, checked: Pick<ArchiveCheck, 'sha256'>): Promise<number> {
  const appender = new OrderedAppender(store);
  const hash = createHash('sha256');
  let number = 0;
  for await (const line of archiveLines(file)) {
    number++;
    const value = number === 1 ? undefined : parseLine(line, number);
    if ((value as Trailer)?.end === true) break;
    hash.update(`${line}\n`);
    if (number === 1) continue;
    await appender.add(eventOf(value, number));
    if (number % 5000 === 0) onProgress(appender.appended);
  }
  if (hash.digest('hex') !== checked.sha256) {
    throw new CommandFailure(EXIT.badArchive, 'the archive changed between its check and its load: the store holds part of it and is left marked unfinished; empty it and import an archive nothing writes meanwhile');
  }
  await appender.flush();
  onProgress(appender.appended);
  return appender.appended;
}

import { lstatSync, statSync } from 'node:fs';
import { CommandFailure, EXIT } from './exit-codes';
import { withStagedArchive } from './archive-location';
import { checkArchive, exportLog, importArchive } from './log-archive';
import { Progress } from './progress';
import { loadStore, requireEmptyStore, requireFinishedLoad } from './store-loading';
import { Verb, openExistingStore, openStore, shown } from './verb';

const isS3 = (location: string) => /^s3:\/\//i.test(location);

export const exportVerb: Verb = {
  name: 'export',
  summary: 'write the whole log, every database, to a compressed archive with a checksum',
  help: `Usage: lance-catalog export --to FILE|s3://bucket/key [--json]

Writes every database's events, up to the newest one when the export starts, to FILE as
gzip-compressed NDJSON whose last line holds the count and SHA-256 of the rest. The server may keep
serving meanwhile: what it writes after the start is not in the archive. The event store is the one
EVENT_STORE names (with DATA_DIR for the embedded store); an s3:// archive is written with the
warehouse's S3 settings.`,
  options: { to: { type: 'string' } },
  async run({ values, config, json }) {
    const to = values.to as string | undefined;
    if (!to) throw new CommandFailure(EXIT.usage, 'export needs --to FILE (or s3://bucket/key)');
    // A new file, never over one: an earlier backup, a link or a device at that name stays as it is.
    if (!isS3(to) && lstatSync(to, { throwIfNoEntry: false })) {
      throw new CommandFailure(EXIT.usage, `${to} exists already: export writes a new file; name another, or remove it first`);
    }
    const store = openExistingStore(config.eventStore, config);
    const progress = new Progress('exporting events', undefined, json);
    try {
      await requireFinishedLoad(store, config.eventStore);
      const started = Date.now();
      const summary = await withStagedArchive(to, config, 'write', (file) => exportLog(store, file, (n) => progress.update(n)));
      return {
        exitCode: EXIT.ok,
        lines: [],
        summary: { archive: to, event_store: shown(config.eventStore), events: summary.events, up_to_position: summary.upToPosition, bytes: summary.bytes, sha256: summary.sha256, seconds: (Date.now() - started) / 1000 },
      };
    } finally {
      progress.done();
      await store.close();
    }
  },
};

export const importVerb: Verb = {
  name: 'import',
  summary: 'load an archive written by export into an empty event store',
  help: `Usage: lance-catalog import --from FILE|s3://bucket/key [--json]

Loads an archive written by 'lance-catalog export' into the event store EVENT_STORE names, which must
be empty (exit 3 otherwise). The whole archive is read and its checksum checked before anything is
written: a damaged or cut-short archive writes nothing (exit 4). Start the servers on the store
once the import is done.`,
  options: { from: { type: 'string' } },
  async run({ values, config, json }) {
    const from = values.from as string | undefined;
    if (!from) throw new CommandFailure(EXIT.usage, 'import needs --from FILE (or s3://bucket/key)');
    if (!isS3(from)) {
      const found = statSync(from, { throwIfNoEntry: false });
      if (!found) throw new CommandFailure(EXIT.usage, `there is no archive at ${from}`);
      if (!found.isFile()) throw new CommandFailure(EXIT.usage, `${from} is not a file: name the archive 'lance-catalog export' wrote`);
    }
    const store = openStore(config.eventStore, config);
    const progress = new Progress('importing events', undefined, json);
    try {
      await requireEmptyStore(store, config.eventStore, 'import only loads an empty store');
      const started = Date.now();
      return await withStagedArchive(from, config, 'read', async (file) => {
        const checking = new Progress('checking archive', undefined, json);
        const check = await checkArchive(file, (n) => checking.update(n));
        checking.done();
        progress.setTotal(check.events);
        const imported = await loadStore(store, 'import', () => importArchive(file, store, (n) => progress.update(n), check));
        return {
          exitCode: EXIT.ok,
          lines: [],
          summary: { archive: from, event_store: shown(config.eventStore), events: imported, streams: check.streams, exported_at: check.exportedAt, exported_from: check.source, sha256: check.sha256, seconds: (Date.now() - started) / 1000 },
        };
      });
    } finally {
      progress.done();
      await store.close();
    }
  },
};

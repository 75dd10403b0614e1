import { CatalogEvent, CatalogState, EventMetadata, evolve, finalManifestName, versionsDir } from '@app/catalog';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { closeClient, median, post, report, send, stagingManifestName, startServer, timedWithCpu } from './support';

/**
 * What a Lance client asks before each read and commit of a managed table, `version/list` with
 * `limit=1&descending=true` (its latest version), on tables of VERSIONS versions, beside
 * DescribeTable of the same table as the same-run baseline: the server's CPU per call, one call
 * at a time over one keep-alive connection, taking turns of TURN calls. The latest version should
 * cost the same whatever the table's history holds. Beside them, a page of a table's history
 * (`limit=100`, oldest first), which the catalog first checks against the manifests in storage
 * (a client's own cleanup removes them without a call): its turns are a quarter as long.
 *
 * Then the same questions of a table without managed versioning, answered from its manifests in
 * storage: one version (DescribeTableVersion), the latest, a page of 100, beside DescribeTable.
 *
 * Then the fold of an expiry's record: one TableVersionsDeleted of all but 10 of a table's
 * versions, beside folding the TableVersionCreated events of those versions (the baseline), at
 * FOLD_VERSIONS versions: what every process holding the catalog (APIs, workers, a replay) spends
 * on it, on its main thread.
 */
const VERSIONS = (process.env.BENCH_LIST_VERSIONS ?? '30,300,3000').split(',').map(Number);
const TURNS = Number(process.env.BENCH_LIST_TURNS ?? 8);
const TURN = Number(process.env.BENCH_LIST_TURN ?? 1000);
/** Untimed calls of each kind first, so that no turn runs code V8 has not optimised yet. */
const WARM = Number(process.env.BENCH_LIST_WARM ?? 4000);
const MANIFEST = 'x'.repeat(4096);
/** A page costs tens of times a DescribeTable on a long history: its turns and warm-up are a quarter as long. */
const PAGE_TURN = Math.ceil(TURN / 4);
const PAGE_WARM = Math.ceil(WARM / 4);
const FOLD_VERSIONS = (process.env.BENCH_FOLD_VERSIONS ?? '10000,100000').split(',').map(Number);

/** Milliseconds to fold a table's `versions` versions, then one event deleting all but the last 10 of them. */
function foldExpiry(versions: number): { created: number; deleted: number } {
  const state = new CatalogState();
  const id = ['f', 't'];
  const location = '/wh/default/f/t.lance';
  const metadata: EventMetadata = { transactionId: 't', operation: 'bench', occurredAt: new Date(0).toISOString() };
  const fold = (event: CatalogEvent) => evolve(state, { event, metadata, revision: ++state.revision });
  fold({ type: 'NamespaceCreated', data: { namespace: ['f'], properties: {} } } as CatalogEvent);
  fold({ type: 'TableDeclared', data: { table: id, tableUuid: 'u', location, properties: {}, managedVersioning: true } } as CatalogEvent);
  const started = process.hrtime.bigint();
  for (let version = 1; version <= versions; version++) {
    fold({
      type: 'TableVersionCreated',
      data: { table: id, tableUuid: 'u', version, manifestPath: `${location}/_versions/${finalManifestName(version, 'V2')}`, namingScheme: 'V2', timestampMillis: version },
    } as CatalogEvent);
  }
  const created = process.hrtime.bigint();
  fold({
    type: 'TableVersionsDeleted',
    data: { table: id, tableUuid: 'u', versions: Array.from({ length: versions - 10 }, (_, i) => i + 1), reason: 'expired' },
  } as CatalogEvent);
  const deleted = process.hrtime.bigint();
  if (state.table(id)!.versions.size !== 10) throw new Error('the expiry did not leave 10 versions');
  return { created: Number(created - started) / 1e6, deleted: Number(deleted - created) / 1e6 };
}

async function call(url: string, body: string): Promise<void> {
  const res = await send(url, 'application/json', Buffer.from(body));
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${res.body.toString()}`);
}

/**
 * The server's CPU per call of each side, in turns of TURN calls (a quarter as many for the sides
 * named in `long`), after WARM untimed calls of each: the median turn's.
 */
async function cpuPerCall<K extends string>(pid: number, sides: Record<K, () => Promise<void>>, long: Set<string>): Promise<Record<K, number>> {
  const names = Object.keys(sides) as K[];
  const calls = (name: K) => (long.has(name) ? PAGE_TURN : TURN);
  const cpu = Object.fromEntries(names.map((name) => [name, [] as number[]])) as unknown as Record<K, number[]>;
  for (const name of names) for (let i = 0; i < (long.has(name) ? PAGE_WARM : WARM); i++) await sides[name]();
  for (let turn = 0; turn < TURNS; turn++) {
    for (const name of turn % 2 ? [...names].reverse() : names) {
      const { user, system } = await timedWithCpu(pid, async () => {
        for (let i = 0; i < calls(name); i++) await sides[name]();
      });
      cpu[name].push((user + system) / calls(name));
    }
  }
  return Object.fromEntries(names.map((name) => [name, median(cpu[name])])) as Record<K, number>;
}

/**
 * A table without managed versioning: the client commits to storage itself, and the catalog answers
 * its versions from the manifests in `_versions/`. DescribeTableVersion of one version, of the
 * latest, and a page of 100 versions, beside DescribeTable; the manifests are written straight into
 * the directory, as a client's commits leave them.
 */
async function unmanaged(): Promise<Array<Record<string, string | number>>> {
  const server = await startServer({ MANAGED_VERSIONING: 'false' }, 'dist/apps/api/src/main.js');
  const rows: Array<Record<string, string | number>> = [];
  try {
    await post(`${server.url}/v1/namespace/u/create`, {});
    for (const [t, versions] of VERSIONS.entries()) {
      const table = `${server.url}/v1/table/u%24t${t}`;
      const dir = versionsDir((await post(`${table}/declare`, {})).location);
      mkdirSync(dir, { recursive: true });
      for (let version = 1; version <= versions; version++) writeFileSync(join(dir, finalManifestName(version, 'V2')), MANIFEST);
      const middle = Math.ceil(versions / 2);
      const cpu = await cpuPerCall(
        server.pid,
        {
          describe: () => call(`${table}/describe`, '{}'),
          version: () => call(`${table}/version/describe`, JSON.stringify({ version: middle })),
          latest: () => call(`${table}/version/describe`, '{}'),
          page: () => call(`${table}/version/list?delimiter=%24&limit=100`, 'null'),
        },
        new Set(['version', 'latest', 'page']),
      );
      rows.push({
        'table versions': versions,
        'DescribeTable µs/call (baseline)': cpu.describe.toFixed(0),
        'DescribeTableVersion, one version, µs/call': cpu.version.toFixed(0),
        ratio: (cpu.version / cpu.describe).toFixed(2),
        'DescribeTableVersion, the latest, µs/call': cpu.latest.toFixed(0),
        'latest ratio': (cpu.latest / cpu.describe).toFixed(2),
        'version/list, a page of 100, µs/call': cpu.page.toFixed(0),
        'page ratio': (cpu.page / cpu.describe).toFixed(2),
      });
    }
  } finally {
    await server.stop();
  }
  return rows;
}

async function main(): Promise<void> {
  const server = await startServer({}, 'dist/apps/api/src/main.js');
  try {
    await post(`${server.url}/v1/namespace/v/create`, {});
    const rows: Array<Record<string, string | number>> = [];
    for (const [t, versions] of VERSIONS.entries()) {
      const table = `${server.url}/v1/table/v%24t${t}`;
      const dir = versionsDir((await post(`${table}/declare`, {})).location);
      mkdirSync(dir, { recursive: true });
      for (let version = 1; version <= versions; version++) {
        const staging = join(dir, stagingManifestName(version));
        writeFileSync(staging, MANIFEST);
        await post(`${table}/version/create`, { version, manifest_path: staging.slice(1) });
      }
      const sides = {
        describe: () => call(`${table}/describe`, '{}'),
        // As the lancedb client sends it: the body is the literal `null`.
        latest: () => call(`${table}/version/list?delimiter=%24&limit=1&descending=true`, 'null'),
        page: () => call(`${table}/version/list?delimiter=%24&limit=100`, 'null'),
      };
      const cpu = await cpuPerCall(server.pid, sides, new Set(['page']));
      const { describe, latest, page } = cpu;
      rows.push({
        'table versions': versions,
        'DescribeTable µs/call (baseline)': describe.toFixed(0),
        'version/list, latest, µs/call': latest.toFixed(0),
        ratio: (latest / describe).toFixed(2),
        'version/list, a page of 100, µs/call': page.toFixed(0),
        'page ratio': (page / describe).toFixed(2),
      });
    }
    report(`The latest version of a managed table, as a Lance client asks for it, and a page of its history: server CPU per call, median of ${TURNS} turns of ${TURN} (pages: ${PAGE_TURN})`, rows);
    report(`A table without managed versioning: one version, the latest, and a page of its history, answered from its manifests in storage: server CPU per call, median of ${TURNS} turns of ${PAGE_TURN} (DescribeTable: ${TURN})`, await unmanaged());
    report(
      'An expiry recorded: one TableVersionsDeleted of all but 10 versions folded, beside folding the versions it deletes (median of 3)',
      FOLD_VERSIONS.map((versions) => {
        const runs = [foldExpiry(versions), foldExpiry(versions), foldExpiry(versions)];
        const created = median(runs.map((r) => r.created));
        const deleted = median(runs.map((r) => r.deleted));
        return { 'table versions': versions, 'TableVersionCreated x versions, ms (baseline)': created.toFixed(1), 'TableVersionsDeleted, ms': deleted.toFixed(1), ratio: (deleted / created).toFixed(2) };
      }),
    );
  } finally {
    await server.stop();
    closeClient();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

import { CatalogState, DraftCatalog, decideCreateTableVersion, evolve, finalManifestName, versionsDirOf } from '@app/catalog';
import { report } from './support';

/**
 * What a group commit costs per command as a table's version count grows: each command is decided
 * on a fresh draft of the state and its event folded into that draft (as CatalogWriter does), for a
 * table that already has 10 ... 100,000 versions. The ratio is against the 10-version table: flat
 * means a commit does not pay for the versions before it.
 */
const SIZES = (process.env.BENCH_VERSION_COUNTS ?? '10,1000,10000,100000').split(',').map(Number);
const COMMITS = Number(process.env.BENCH_DRAFT_COMMITS ?? 2000);
const LOCATION = '/warehouse/default/ns/t.lance';
const DIR = versionsDirOf(LOCATION);
const meta = (i: number) => ({ transactionId: `bench-${i}`, operation: 'CreateTableVersion', occurredAt: new Date(1_700_000_000_000 + i).toISOString() });

function stateWith(versions: number): CatalogState {
  const state = new CatalogState();
  let revision = -1;
  const fold = (event: Parameters<typeof evolve>[1]['event'], i: number) => {
    state.revision = ++revision;
    evolve(state, { event, metadata: meta(i), revision });
  };
  fold({ type: 'NamespaceCreated', data: { namespace: ['ns'], properties: {} } }, -2);
  fold({ type: 'TableDeclared', data: { table: ['ns', 't'], tableUuid: 'u', location: LOCATION, properties: {}, managedVersioning: true } }, -1);
  for (let v = 1; v <= versions; v++) {
    fold({ type: 'TableVersionCreated', data: { table: ['ns', 't'], tableUuid: 'u', version: v, manifestPath: DIR + finalManifestName(v, 'V2'), namingScheme: 'V2', timestampMillis: v } }, v);
  }
  return state;
}

function microsPerCommit(state: CatalogState, versions: number): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < COMMITS; i++) {
    const draft = new DraftCatalog(state);
    const version = versions + 1 + i;
    const events = decideCreateTableVersion(draft, {
      id: ['ns', 't'],
      version,
      stagingManifestPath: `${DIR}${version}.manifest-staging`,
      namingScheme: 'V2',
      timestampMillis: version,
    });
    for (const event of events) evolve(draft, { event, metadata: meta(version), revision: -1 });
  }
  return Number(process.hrtime.bigint() - started) / 1e3 / COMMITS;
}

const rows = SIZES.map((versions) => {
  const state = stateWith(versions);
  microsPerCommit(state, versions); // warm-up
  const runs = [0, 1, 2].map(() => microsPerCommit(state, versions));
  return { versions, us: Math.min(...runs) };
});
report(`Draft commit cost by versions already in the table (${COMMITS} commits each)`, rows.map((r) => ({
  'versions in the table': r.versions,
  'µs per commit': r.us.toFixed(2),
  ratio: (r.us / rows[0].us).toFixed(2),
})));

import { ARROW_STREAM, arrowStream, sampleTable } from '../arrow-data';
import { LoadContext, call, sleep, tablePath } from './context';

const ROWS = 20;

/**
 * HTTP inserts (Arrow IPC) into a table, ids of this writer's own range; each acknowledged one
 * names the version it made. Between them, a count and a filtered query through the balancer.
 */
export async function insertAndQuery(ctx: LoadContext, table: string, writer: number): Promise<void> {
  const key = ctx.keys.get(table)!;
  const driver = `data:${table}:${writer}`;
  let next = (writer + 1) * 10_000_000;
  for (let i = 0; ctx.running(); i++) {
    ctx.ledger.tried(table, ROWS);
    const inserted = await call(ctx, driver, 'insert', `${tablePath(table)}/insert`, arrowStream(sampleTable(next, ROWS)), [], ARROW_STREAM);
    if (inserted.outcome === 'success') {
      ctx.ledger.versions.push({ table, key, version: inserted.reply!.body.version, rows: ROWS });
      ctx.obs.ack();
      next += ROWS;
    }
    if (i % 2 === 0) await call(ctx, driver, 'count_rows', `${tablePath(table)}/count_rows`, { predicate: `id >= ${next - ROWS}` });
    else await call(ctx, driver, 'query', `${tablePath(table)}/query`, { filter: `id >= ${next - 100}`, k: 50, columns: { column_names: ['id', 'category'] } });
    await sleep(50);
  }
}

const INDEXES = [
  { column: 'id', index_type: 'BTREE' },
  { column: 'category', index_type: 'BITMAP' },
  { column: 'labels', index_type: 'LABEL_LIST' },
];

/** How many index names the builds take in turn: a table keeps a few indexes, as a real one does. */
const INDEX_NAMES = 6;

/**
 * Index builds requested now and then: each is a transaction the workers must end. A name comes
 * round again once the index made under it is dropped (DropTableIndex); a drop that could not be
 * made leaves the name taken, which the next build is refused (409 code 7).
 */
export async function buildIndexes(ctx: LoadContext, tables: string[], everyMs: number): Promise<void> {
  for (let n = 0; ctx.running(); n++) {
    const table = tables[n % tables.length];
    const spec = INDEXES[n % INDEXES.length];
    const name = `ix${n % INDEX_NAMES}`;
    if (n >= INDEX_NAMES) await call(ctx, 'indexes', 'drop_index', `${tablePath(table)}/index/${name}/drop`, {}, [{ status: 404, code: 6 }]);
    const requested = await call(ctx, 'indexes', 'create_scalar_index', `${tablePath(table)}/create_scalar_index`, { ...spec, name }, [{ status: 409, code: 7 }]);
    if (requested.outcome === 'success') {
      ctx.ledger.transactions.push({ id: requested.reply!.body.transaction_id, what: `${spec.index_type} ${name} (${n}) on ${table}` });
      ctx.obs.ack();
    }
    await sleep(everyMs);
  }
}

/** Tags on versions the inserts acknowledged, and branches now and then. */
export async function tagAndBranch(ctx: LoadContext, tables: string[], everyMs: number): Promise<void> {
  for (let n = 0; ctx.running(); n++) {
    const table = tables[n % tables.length];
    const versions = ctx.ledger.versions.filter((v) => v.table === table);
    const version = versions.length ? versions[Math.floor(versions.length / 2 + (n % (versions.length / 2 + 1)))]?.version ?? 1 : 1;
    if (n % 4 === 3) {
      const branch = `br${n}`;
      const made = await call(ctx, 'branches', 'branches/create', `${tablePath(table)}/branches/create`, { name: branch, from_version: version });
      if (made.outcome === 'success') {
        ctx.ledger.branches.push({ table, branch });
        ctx.obs.ack();
      }
    } else {
      const tag = `t${n}`;
      const made = await call(ctx, 'tags', 'tags/create', `${tablePath(table)}/tags/create`, { tag, version });
      if (made.outcome === 'success') {
        ctx.ledger.tags.push({ table, tag, version });
        ctx.obs.ack();
      }
    }
    await sleep(everyMs);
  }
}

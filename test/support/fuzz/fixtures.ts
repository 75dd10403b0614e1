import * as lancedb from '@lancedb/lancedb';
import { ARROW_STREAM, arrowStream, sampleTable } from '../arrow-data';
import { Api } from '../http';
import { FIXTURE, Fixture, schemaBase64 } from './seeds';

const enc = encodeURIComponent;
const FINAL = ['Succeeded', 'Failed', 'Canceled'];

/** Waits until a transaction has ended; false when it has not within `ms`. */
export async function settleTransaction(api: Api, id: string, ms = 60_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = await api.post(`/v1/transaction/${enc(id)}/describe`, {});
    if (r.status !== 200 || FINAL.includes(r.body?.status)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((res) => setTimeout(res, 100));
  }
}

async function must(what: string, reply: Promise<{ status: number; body: any; text: string }>): Promise<any> {
  const r = await reply;
  if (r.status >= 300) throw new Error(`fixture: ${what} answered ${r.status} ${r.text.slice(0, 300)}`);
  return r.body;
}

async function exists(api: Api, kind: 'namespace' | 'table', id: string): Promise<boolean> {
  return (await api.post(`/v1/${kind}/${enc(id)}/exists`, {})).status === 200;
}

/**
 * The objects valid requests name, made through the API, and made again when a request that
 * succeeded removed or reshaped one: a table dropped, renamed or given other columns, an index or
 * tag deleted. A remade table is a new table under the same name.
 */
export class Fixtures {
  private tableSchema?: string;
  private scratchSchema?: string;
  fixture!: Fixture;

  constructor(private readonly api: Api) {}

  async make(): Promise<Fixture> {
    const { api } = this;
    await must('namespace', api.post(`/v1/namespace/${FIXTURE.namespace}/create`, {}));
    await must('empty namespace', api.post(`/v1/namespace/${enc(FIXTURE.emptyNamespace)}/create`, {}));
    const transactionId = await this.makeTable();
    await this.makeScratch();
    await this.makeViewSource();
    await this.makeView();
    const location = (await must('describe', api.post(`/v1/table/${enc(FIXTURE.table)}/describe`, {}))).location;
    const other = api.withHeaders({ 'x-lance-database': FIXTURE.otherDatabase });
    await must('other namespace', other.post(`/v1/namespace/${FIXTURE.otherTable.split('$')[0]}/create`, {}));
    await must('other table', other.send('POST', `/v1/table/${enc(FIXTURE.otherTable)}/create`, arrowStream(sampleTable(0, 20)), ARROW_STREAM));
    this.fixture = { transactionId, location };
    return this.fixture;
  }

  /** Makes again whatever a successful request took away; true when something had to be. */
  async restore(): Promise<boolean> {
    const { api } = this;
    let remade = false;
    for (const ns of [FIXTURE.namespace, FIXTURE.emptyNamespace]) {
      if (await exists(api, 'namespace', ns)) continue;
      await must('namespace', api.post(`/v1/namespace/${enc(ns)}/create`, {}));
      remade = true;
    }
    if (!(await this.tableIntact(FIXTURE.table, this.tableSchema, FIXTURE.index, FIXTURE.tag))) {
      await this.drop(FIXTURE.table);
      await this.makeTable();
      remade = true;
    }
    if (!(await this.tableIntact(FIXTURE.scratch, this.scratchSchema, FIXTURE.scratchIndex))) {
      await this.drop(FIXTURE.scratch);
      await this.makeScratch();
      remade = true;
    }
    if (!(await exists(api, 'table', FIXTURE.rootSource))) {
      await this.makeViewSource();
      remade = true;
    }
    if (!(await exists(api, 'table', FIXTURE.view))) {
      await this.makeView();
      remade = true;
    }
    return remade;
  }

  private async tableIntact(id: string, schema: string | undefined, index: string, tag?: string): Promise<boolean> {
    const { api } = this;
    const described = await api.post(`/v1/table/${enc(id)}/describe`, { load_detailed_metadata: true });
    if (described.status !== 200 || JSON.stringify(described.body.schema) !== schema) return false;
    const indexes = await api.post(`/v1/table/${enc(id)}/index/list`, {});
    if (!indexes.body?.indexes?.some((i: { index_name: string }) => i.index_name === index)) return false;
    return !tag || (await api.post(`/v1/table/${enc(id)}/tags/version`, { tag })).status === 200;
  }

  private async drop(id: string): Promise<void> {
    const r = await this.api.post(`/v1/table/${enc(id)}/drop`);
    if (r.status !== 200 && r.status !== 404) throw new Error(`fixture: dropping ${id} answered ${r.status} ${r.text.slice(0, 300)}`);
  }

  /** The main table: 50 rows, a BTREE index and a tag; answers the index build's transaction. */
  private async makeTable(): Promise<string> {
    const { api } = this;
    const T = enc(FIXTURE.table);
    await must('table', api.send('POST', `/v1/table/${T}/create`, arrowStream(sampleTable(0, 50)), ARROW_STREAM));
    await must('tag', api.post(`/v1/table/${T}/tags/create`, { tag: FIXTURE.tag, version: 1 }));
    const index = await must('index', api.post(`/v1/table/${T}/create_scalar_index`, { column: 'id', index_type: 'BTREE', name: FIXTURE.index }));
    if (!(await settleTransaction(api, index.transaction_id))) throw new Error('fixture: the index build did not end in 60 s');
    this.tableSchema = JSON.stringify((await must('describe', api.post(`/v1/table/${T}/describe`, { load_detailed_metadata: true }))).schema);
    return index.transaction_id;
  }

  /** The scratch table: 10 rows, a computed column and a BITMAP index. */
  private async makeScratch(): Promise<void> {
    const { api } = this;
    const S = enc(FIXTURE.scratch);
    await must('scratch table', api.send('POST', `/v1/table/${S}/create`, arrowStream(sampleTable(0, 10)), ARROW_STREAM));
    await must('computed column', api.post(`/v1/table/${S}/add_columns`, { new_columns: [{ name: FIXTURE.computed, computed: 'id * 2' }] }));
    const index = await must('scratch index', api.post(`/v1/table/${S}/create_index`, { column: 'category', index_type: 'BITMAP', name: FIXTURE.scratchIndex }));
    if (!(await settleTransaction(api, index.transaction_id))) throw new Error('fixture: the index build did not end in 60 s');
    this.scratchSchema = JSON.stringify((await must('describe', api.post(`/v1/table/${S}/describe`, { load_detailed_metadata: true }))).schema);
  }

  /** A view's source keeps stable row ids, which only a client's storage option asks for. */
  private async makeViewSource(): Promise<void> {
    const db = await lancedb.connectNamespace('rest', { uri: this.api.url });
    try {
      const rows = Array.from({ length: 20 }, (_, id) => ({ id, x: id * 1.5 }));
      (await db.createTable(FIXTURE.rootSource, rows, [], { storageOptions: { newTableEnableStableRowIds: 'true' } })).close();
    } finally {
      db.close();
    }
  }

  private async makeView(): Promise<void> {
    await must(
      'view',
      this.api.post(`/v1/materialized_view/${FIXTURE.view}/create`, {
        kind: 'query',
        source_query: JSON.stringify({ source_table: FIXTURE.rootSource, select: { id: 'id' } }),
        output_schema: schemaBase64(['id']),
        with_no_data: true,
      }),
    );
  }
}

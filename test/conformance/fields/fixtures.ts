/** What the field-level suites share: one server per file, small tables, and reading answers. */
import * as arrow from 'apache-arrow';
import { Api, Reply } from '../../support/http';
import { RunningServer, ServerOptions, startServer } from '../../support/server';

export { Api };
export type { Reply };

export const ARROW = { 'content-type': 'application/vnd.apache.arrow.stream' };
export const arrowStream = (t: arrow.Table) => Buffer.from(arrow.tableToIPC(t, 'stream'));
export const T = (...parts: string[]) => `/v1/table/${Api.id(parts)}`;
export const NS = (...parts: string[]) => `/v1/namespace/${Api.id(parts)}`;
export const TX = (id: string) => `/v1/transaction/${encodeURIComponent(id)}`;

/**
 * `count` rows from `from`: `id` (int32), `name` (`n<id>`), `score` (id / 2, float64) and a
 * 4-number `vector` whose every number is the id, so the nearest row to `[k, k, k, k]` is id k.
 */
export function rows(from: number, count: number): arrow.Table {
  const ids = Array.from({ length: count }, (_, i) => from + i);
  const dim = 4;
  const vectorType = new arrow.FixedSizeList(dim, new arrow.Field('item', new arrow.Float32(), true));
  const vectors = arrow.makeVector(
    arrow.makeData({
      type: vectorType,
      length: count,
      child: arrow.makeData({ type: new arrow.Float32(), length: count * dim, data: Float32Array.from(ids.flatMap((id) => Array(dim).fill(id))) }),
    }),
  );
  return new arrow.Table({
    id: arrow.vectorFromArray(Int32Array.from(ids)),
    name: arrow.vectorFromArray(ids.map((id) => `n${id}`), new arrow.Utf8()),
    score: arrow.vectorFromArray(Float64Array.from(ids.map((id) => id / 2))),
    vector: vectors,
  });
}

/** One server for the file: started before its tests, stopped after. */
export function suiteServer(options: ServerOptions = {}): { readonly api: Api; readonly server: RunningServer; readonly url: string } {
  const state: { server?: RunningServer; api?: Api } = {};
  beforeAll(async () => {
    state.server = await startServer({ ...options, env: { ACCESS_LOG: 'off', ...options.env } });
    state.api = new Api(state.server.url);
  }, 60_000);
  afterAll(() => state.server?.stop());
  return {
    get api() {
      return state.api!;
    },
    get server() {
      return state.server!;
    },
    get url() {
      return state.server!.url;
    },
  };
}

/** Creates a table (its namespace must exist) with `table`'s rows; answers CreateTable's body. */
export async function createTable(api: Api, id: string[], table: arrow.Table = rows(0, 5), query = ''): Promise<Record<string, any>> {
  const res = await api.send<Record<string, any>>('POST', `${T(...id)}/create${query}`, arrowStream(table), ARROW);
  if (res.status !== 200) throw new Error(`creating ${id.join('$')}: ${res.status} ${res.text}`);
  return res.body;
}

export async function ok(reply: Promise<Reply<any>>, status = 200): Promise<Reply<any>> {
  const r = await reply;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text.slice(0, 500)}`);
  return r;
}

/** A QueryTable answer (an Arrow IPC file) as its column names and rows. */
export async function query(url: string, id: string[], body: object): Promise<{ columns: string[]; rows: Record<string, any>[] }> {
  const res = await fetch(`${url}${T(...id)}/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (res.status !== 200) throw new Error(`query ${res.status}: ${Buffer.from(bytes).toString()}`);
  expect(res.headers.get('content-type')).toBe('application/vnd.apache.arrow.file');
  const table = arrow.tableFromIPC(bytes);
  return { columns: table.schema.fields.map((f) => f.name), rows: table.toArray().map((r) => r.toJSON() as Record<string, any>) };
}

/** The ids a query answers, in order. */
export async function ids(url: string, id: string[], body: object): Promise<number[]> {
  return (await query(url, id, { ...body, columns: { column_names: ['id'] } })).rows.map((r) => r.id as number);
}

export async function count(api: Api, id: string[], body: object = {}): Promise<number> {
  const res = await ok(api.post(`${T(...id)}/count_rows`, body));
  return res.body as number;
}

const TERMINAL = ['Succeeded', 'Failed', 'Canceled'];

/** Polls DescribeTransaction (every 100 ms) until the transaction ends; answers its last description. */
export async function settled(api: Api, transactionId: string, ms = 30_000): Promise<{ status: string; properties: Record<string, string> }> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await api.post(`${TX(transactionId)}/describe`, {});
    if (res.status === 200 && TERMINAL.includes(res.body.status)) return res.body;
    if (Date.now() > deadline) throw new Error(`transaction ${transactionId} did not end: ${res.text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The database's log head: unchanged when a request recorded nothing. */
export async function revision(api: Api): Promise<number> {
  return (await ok(api.get('/v1/history/digest'))).body.revision as number;
}

export interface HistoryEvent {
  revision: number;
  type: string;
  transaction_id: string;
  operation: string;
  context: Record<string, string>;
  principal?: string;
  data: Record<string, any>;
}

/** The newest `limit` events of the database's log, oldest first. */
export async function newestEvents(api: Api, limit = 50): Promise<HistoryEvent[]> {
  return (await ok(api.get(`/v1/history/database?limit=${limit}`))).body.events;
}

export function expectError(reply: Reply, status: number, code: number, mentions?: string | RegExp): void {
  expect({ status: reply.status, code: reply.body?.code }).toEqual({ status, code });
  expect(typeof reply.body.error).toBe('string');
  if (mentions !== undefined) expect(reply.body.error).toMatch(mentions);
}

/** Base64 of an Arrow IPC stream holding only a schema of these columns (a view's output_schema). */
export function schemaOf(columns: Record<string, arrow.DataType>): string {
  const table = new arrow.Table(Object.fromEntries(Object.entries(columns).map(([name, type]) => [name, arrow.vectorFromArray([], type)])));
  return Buffer.from(arrow.tableToIPC(table, 'stream')).toString('base64');
}

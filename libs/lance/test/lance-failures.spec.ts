import * as lancedb from '@lancedb/lancedb';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { classifyLanceFailure } from '../src/lance-failures';

/** Lance's own messages, made by Lance on a real table, classified without leaking a path or a source line. */
describe('classifyLanceFailure', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lance-failures-'));
  let table: lancedb.Table;
  const messageOf = async (work: () => Promise<unknown>) => {
    try {
      await work();
    } catch (e) {
      return (e as Error).message;
    }
    throw new Error('Lance accepted it');
  };

  beforeAll(async () => {
    table = await (await lancedb.connect(dir)).createTable('t', [{ id: 1, x: 's', v: [1, 2] }]);
  });
  afterAll(() => {
    table.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const leaks = (reason: string | undefined) => reason !== undefined && (/\.rs:\d+|Caused by|\/usr\//.test(reason) || reason.includes(dir));

  test.each([
    ['an unknown column', () => table.countRows('nope > 1'), 'no-column', "no column named 'nope' in the table"],
    ['a parse error', () => table.countRows('id >> (('), 'refused', 'not a valid SQL expression: expected an expression, found EOF'],
    ['a literal of the wrong type', () => table.countRows("id > 'abc'"), 'refused', "a literal does not match its column's type (Float64)"],
    ['an unknown function', () => table.countRows('frob(id) > 1'), 'refused', "no SQL function named 'frob'"],
    ['a query vector of another dimension', () => table.query().nearestTo([1, 2, 3]).toArrow(), 'refused', 'no vector column has dimension 3'],
    ['a version that does not exist', () => table.checkout(99), 'missing-files', undefined],
  ] as const)('%s', async (_what, work, kind, reason) => {
    const message = await messageOf(work);
    const failure = classifyLanceFailure(message);
    expect(failure).toEqual(reason === undefined ? { kind } : { kind, reason });
    expect(leaks(failure.reason)).toBe(false);
  });

  test('rows that do not fit the schema, when writing', async () => {
    const message = await messageOf(() => table.add([{ id: 'str', q: 1 }]));
    expect(classifyLanceFailure(message, true)).toEqual({ kind: 'schema', reason: "field 'q' is not in the table's schema" });
  });

  test('unreachable stores, conflicts and panics', () => {
    expect(classifyLanceFailure('Generic S3 error: error sending request for url (http://127.0.0.1:9/b/k)').kind).toBe('store-unreachable');
    expect(classifyLanceFailure('error sending request for url (http://api:2333/v1/table/a$b/describe)').kind).toBe('catalog-unreachable');
    expect(classifyLanceFailure('Retryable commit conflict for version 7').kind).toBe('conflict');
    expect(classifyLanceFailure("thread 'tokio-runtime-worker' panicked at src/x.rs:1:2").kind).toBe('panic');
  });

  // What the server's own lancedb connection says when the catalog it commits through answered
  // 503 code 17 (the event store or the object store down): not the request's fault.
  test('the catalog unavailable to a managed table, and a commit whose outcome Lance could not learn', () => {
    const rest = '/usr/local/cargo/registry/src/index.crates.io-1949cf8c6b5b557f/lance-namespace-impls-12.0.0/src/rest.rs:567:74';
    expect(classifyLanceFailure(`Runtime error: Namespace error: Namespace error: Service unavailable: the event store is unavailable; retry later, ${rest}`)).toEqual({
      kind: 'catalog-unavailable',
    });
    const unknown =
      'Commit result for version 11 is unknown: the commit may or may not have been applied; check the table state before retrying: ' +
      'commit reported a conflict but the manifest at the target version could not be read back for verification  Caused by: commit reported a conflict but the manifest at the target version could not be read back for verification';
    expect(classifyLanceFailure(unknown, true)).toEqual({ kind: 'commit-unknown' });
    const created =
      'Commit result for version 11 is unknown: the commit may or may not have been applied; check the table state before retrying: dataset creation reported a conflict but the manifest could not be read back for verification';
    expect(classifyLanceFailure(created, true)).toEqual({ kind: 'commit-unknown' });
  });

  test('a catalog whose process ended under the call, and a compaction whose fragment ids a concurrent commit took', () => {
    const dropped =
      'Namespace error: Internal error: Failed to execute request: reqwest::Error { kind: Request, url: "http://127.0.0.1:38331/v1/table/soak%24d0/version/create?delimiter=%24", ' +
      'source: hyper_util::client::legacy::Error(SendRequest, hyper::Error(IncompleteMessage)) }, /usr/local/cargo/registry/src/index.crates.io-1949cf8c6b5b557f/lance-namespace-impls-12.0.0/src/rest.rs:551:60';
    expect(classifyLanceFailure(dropped).kind).toBe('catalog-unreachable');
    const taken =
      'Invalid user input: The commit would produce two fragments with id 194. Fragment ids must be unique. Datasets written by Lance 0.16 and earlier may already contain duplicate ids; ' +
      'those have to be rewritten, or rolled back to a version without the duplicate., /usr/local/cargo/registry/src/index.crates.io-1949cf8c6b5b557f/lance-12.0.0/src/io/commit.rs:709:20';
    expect(classifyLanceFailure(taken, true).kind).toBe('conflict');
  });

  test('a catalog that could not be connected to, which lance-namespace also calls "Service unavailable"', () => {
    const refused =
      'Runtime error: Namespace error: Namespace error: Service unavailable: Failed to execute request: reqwest::Error { kind: Request, url: "http://127.0.0.1:1/v1/table/ns%24t/describe?delimiter=%24", ' +
      'source: hyper_util::client::legacy::Error(Connect, ConnectError("tcp connect error", 127.0.0.1:1, Os { code: 111, kind: ConnectionRefused, message: "Connection refused" })) }, ' +
      '/usr/local/cargo/registry/src/index.crates.io-1949cf8c6b5b557f/lance-namespace-impls-12.0.0/src/rest.rs:551:60';
    expect(classifyLanceFailure(refused)).toEqual({ kind: 'catalog-unreachable' });
  });
});

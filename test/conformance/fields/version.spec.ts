/**
 * The fields of the version operations, one at a time and in batches (see coverage.ts for the
 * tokens). Versions are committed as a Lance client with managed versioning commits them: a
 * staging manifest written under `_versions/`, then `version/create` naming it.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { NS, T, TX, createTable, expectError, ok, revision, rows, suiteServer } from './fixtures';
import { covers } from './coverage';

describe('version operations, field by field', () => {
  const s = suiteServer({ entry: 'api' });
  const api = () => s.api;
  let manifest: Buffer;
  const locations = new Map<string, string>();

  /** A table declared for commits, and where its manifests go. */
  const declare = async (name: string) => {
    const location = (await ok(api().post(`${T('v', name)}/declare`, {}))).body.location as string;
    mkdirSync(`${location}/_versions`, { recursive: true });
    locations.set(name, location);
    return location;
  };
  /** A staging manifest (a real one's bytes) for `version`, named as Lance names it; its path as the request gives it. */
  const stage = (name: string, version: number, scheme: 'V1' | 'V2' = 'V2') => {
    const final = scheme === 'V2' ? `${18446744073709551615n - BigInt(version)}` : `${version}`;
    const path = `${locations.get(name)}/_versions/${final}.manifest-${randomUUID()}`;
    writeFileSync(path, manifest);
    return path.slice(1);
  };
  const listed = async (name: string, query = '') => (await ok(api().post(`${T('v', name)}/version/list${query}`, null))).body;
  const versionsOf = async (name: string, query = '') => (await listed(name, query)).versions.map((v: { version: number }) => v.version);

  beforeAll(async () => {
    await ok(api().post(`${NS('v')}/create`, {}));
    const source = (await createTable(api(), ['v', 'source'], rows(0, 3))).location as string;
    manifest = readFileSync(`${source}/_versions/${readdirSync(`${source}/_versions`).find((f) => f.endsWith('.manifest'))}`);
    await declare('many');
    for (let v = 1; v <= 5; v++) await ok(api().post(`${T('v', 'many')}/version/create`, { version: v, manifest_path: stage('many', v) }));
  });

  covers(
    ['CreateTableVersion#200', 'CreateTableVersion.version', 'CreateTableVersion.manifest_path', 'CreateTableVersion.naming_scheme'],
    'records the version and puts the staged manifest under its final name: V2 (the default) inverted, V1 the version itself',
    async () => {
      const location = await declare('one');
      const staged = stage('one', 1);
      const created = (await ok(api().post(`${T('v', 'one')}/version/create`, { version: 1, manifest_path: staged }))).body;
      expect(created).toMatchObject({ version: { version: 1, manifest_path: `${location.slice(1)}/_versions/18446744073709551614.manifest` }, transaction_id: expect.any(String) });
      expect(readFileSync(`${location}/_versions/18446744073709551614.manifest`)).toEqual(manifest);
      const v2 = (await ok(api().post(`${T('v', 'one')}/version/create`, { version: 2, manifest_path: stage('one', 2), naming_scheme: 'V2' }))).body;
      expect(v2.version.manifest_path).toBe(`${location.slice(1)}/_versions/18446744073709551613.manifest`);
      const v1Location = await declare('v1');
      const v1 = (await ok(api().post(`${T('v', 'v1')}/version/create`, { version: 1, manifest_path: stage('v1', 1, 'V1'), naming_scheme: 'V1' }))).body;
      expect(v1.version.manifest_path).toBe(`${v1Location.slice(1)}/_versions/1.manifest`);
      expect(existsSync(`${v1Location}/_versions/1.manifest`)).toBe(true);
      // The version is the table's latest: its rows are the manifest's.
      expect((await ok(api().post(`${T('v', 'one')}/count_rows`, {}))).body).toBe(3);
      expectError(await api().post(`${T('v', 'one')}/version/create`, { version: 3, manifest_path: `${location.slice(1)}/_versions/nothing-here` }), 400, 13);
    },
  );

  covers(['CreateTableVersion#409'], 'a version that exists is 409 code 14 (put-if-not-exists), and the first one stays', async () => {
    const before = await revision(api());
    expectError(await api().post(`${T('v', 'one')}/version/create`, { version: 1, manifest_path: stage('one', 1) }), 409, 14);
    expect(await revision(api())).toBe(before);
    expect(await versionsOf('one')).toEqual([1, 2]);
  });

  covers(['CreateTableVersion.manifest_size', 'CreateTableVersion.e_tag', 'CreateTableVersion.metadata'], 'records the size, entity tag and metadata given, which the listing answers; a size that is not the manifest\'s is 400 code 13', async () => {
    await declare('meta');
    const body = { version: 1, manifest_path: stage('meta', 1), manifest_size: manifest.length, e_tag: 'etag-one', metadata: { origin: 'fields', run: '7' } };
    const created = (await ok(api().post(`${T('v', 'meta')}/version/create`, body))).body.version;
    expect(created).toMatchObject({ manifest_size: manifest.length, e_tag: 'etag-one', metadata: { origin: 'fields', run: '7' } });
    expect((await listed('meta')).versions[0]).toMatchObject({ manifest_size: manifest.length, e_tag: 'etag-one', metadata: { origin: 'fields', run: '7' } });
    // Without them: the size is the manifest's own, and no entity tag or metadata is made up.
    const plain = (await ok(api().post(`${T('v', 'meta')}/version/create`, { version: 2, manifest_path: stage('meta', 2) }))).body.version;
    expect(plain.manifest_size).toBe(manifest.length);
    expect(plain).not.toHaveProperty('e_tag');
    expect(plain).not.toHaveProperty('metadata');
    const before = await revision(api());
    expectError(await api().post(`${T('v', 'meta')}/version/create`, { version: 3, manifest_path: stage('meta', 3), manifest_size: manifest.length + 1 }), 400, 13, /manifest_size/);
    expect(await revision(api())).toBe(before);
  });

  covers(['ListTableVersions#200', 'ListTableVersions?limit', 'ListTableVersions?page_token', 'ListTableVersions?descending'], 'lists the versions, limit at a time after page_token, newest first with descending', async () => {
    expect(await versionsOf('many')).toEqual([1, 2, 3, 4, 5]);
    expect(await versionsOf('many', '?descending=true')).toEqual([5, 4, 3, 2, 1]);
    const first = await listed('many', '?limit=2');
    expect([first.versions.map((v: { version: number }) => v.version), first.page_token]).toEqual([[1, 2], '2']);
    expect(await versionsOf('many', '?limit=2&page_token=2')).toEqual([3, 4]);
    expect(await versionsOf('many', '?limit=2&page_token=4')).toEqual([5]);
    const down = await listed('many', '?limit=2&descending=true');
    expect([down.versions.map((v: { version: number }) => v.version), down.page_token]).toEqual([[5, 4], '4']);
    expect(await versionsOf('many', '?limit=2&descending=true&page_token=4')).toEqual([3, 2]);
    expect((await listed('many')).versions[0]).toMatchObject({ version: 1, manifest_path: expect.stringMatching(/_versions\/18446744073709551614\.manifest$/), timestamp_millis: expect.any(Number) });
  });

  covers(['DescribeTableVersion#200', 'DescribeTableVersion.version'], 'describes the version asked for, the latest when none is; a version the table lacks is 404 code 11', async () => {
    expect((await ok(api().post(`${T('v', 'many')}/version/describe`, { version: 2 }))).body.version).toMatchObject({ version: 2, manifest_path: expect.stringMatching(/18446744073709551613\.manifest$/) });
    expect((await ok(api().post(`${T('v', 'many')}/version/describe`, {}))).body.version.version).toBe(5);
    expectError(await api().post(`${T('v', 'many')}/version/describe`, { version: 42 }), 404, 11);
  });

  covers(
    ['BatchDeleteTableVersions#200', 'BatchDeleteTableVersions.ranges', 'BatchDeleteTableVersions.ranges.start_version', 'BatchDeleteTableVersions.ranges.end_version'],
    'deletes the version records of each range, start inclusive and end exclusive; 0 to -1 deletes them all; the files stay',
    async () => {
      const location = await declare('del');
      for (let v = 1; v <= 6; v++) await ok(api().post(`${T('v', 'del')}/version/create`, { version: v, manifest_path: stage('del', v) }));
      const deleted = (await ok(api().post(`${T('v', 'del')}/version/delete`, { ranges: [{ start_version: 1, end_version: 3 }, { start_version: 4, end_version: 5 }] }))).body;
      expect(deleted).toEqual({ deleted_count: 3, transaction_id: expect.any(String) });
      expect(await versionsOf('del')).toEqual([3, 5, 6]);
      expect(existsSync(`${location}/_versions/18446744073709551614.manifest`)).toBe(true);
      expect((await ok(api().post(`${T('v', 'del')}/version/delete`, { ranges: [] }))).body.deleted_count).toBe(0);
      expect((await ok(api().post(`${T('v', 'del')}/version/delete`, { ranges: [{ start_version: 0, end_version: -1 }] }))).body.deleted_count).toBe(3);
      expect(await versionsOf('del')).toEqual([]);
    },
  );

  covers(
    [
      'BatchCreateTableVersions#200',
      'BatchCreateTableVersions.entries',
      'BatchCreateTableVersions.entries.id',
      'BatchCreateTableVersions.entries.version',
      'BatchCreateTableVersions.entries.manifest_path',
      'BatchCreateTableVersions.entries.naming_scheme',
      'BatchCreateTableVersions.entries.manifest_size',
      'BatchCreateTableVersions.entries.e_tag',
      'BatchCreateTableVersions.entries.metadata',
    ],
    "creates every entry's version in one transaction, each with its own fields",
    async () => {
      const a = await declare('ba');
      const b = await declare('bb');
      const made = (
        await ok(
          api().post('/v1/table/version/batch-create', {
            entries: [
              { id: ['v', 'ba'], version: 1, manifest_path: stage('ba', 1), manifest_size: manifest.length, e_tag: 'ea', metadata: { k: 'a' } },
              { id: ['v', 'bb'], version: 1, manifest_path: stage('bb', 1, 'V1'), naming_scheme: 'V1' },
            ],
          }),
        )
      ).body;
      expect(made.transaction_id).toEqual(expect.any(String));
      expect(made.versions).toEqual([
        expect.objectContaining({ version: 1, manifest_path: `${a.slice(1)}/_versions/18446744073709551614.manifest`, manifest_size: manifest.length, e_tag: 'ea', metadata: { k: 'a' } }),
        expect.objectContaining({ version: 1, manifest_path: `${b.slice(1)}/_versions/1.manifest` }),
      ]);
      expect(await versionsOf('ba')).toEqual([1]);
      expect(await versionsOf('bb')).toEqual([1]);
      const events = (await ok(api().get(`/v1/history/transaction/${made.transaction_id}`))).body.events;
      expect(events.map((e: { type: string }) => e.type)).toEqual(['TableVersionCreated', 'TableVersionCreated']);
      expectError(await api().post('/v1/table/version/batch-create', { entries: [{ id: ['v', 'ba'], version: 2, manifest_path: stage('ba', 2), manifest_size: 1 }] }), 400, 13, /manifest_size/);
    },
  );

  covers(['BatchCreateTableVersions#409'], 'one entry whose version exists fails the whole batch (409 code 14): nothing of it is created', async () => {
    const before = await revision(api());
    const res = await api().post('/v1/table/version/batch-create', {
      entries: [
        { id: ['v', 'bb'], version: 2, manifest_path: stage('bb', 2, 'V1'), naming_scheme: 'V1' },
        { id: ['v', 'ba'], version: 1, manifest_path: stage('ba', 1) },
      ],
    });
    expectError(res, 409, 14);
    expect(await revision(api())).toBe(before);
    expect(await versionsOf('bb')).toEqual([1]);
  });

  covers(
    [
      'BatchCommitTables#200',
      'BatchCommitTables.operations',
      'BatchCommitTables.operations.declare_table',
      'BatchCommitTables.operations.create_table_version',
      'BatchCommitTables.operations.delete_table_versions',
      'BatchCommitTables.operations.deregister_table',
    ],
    'applies declarations, versions, version deletions and deregistrations in one transaction, answering each',
    async () => {
      await declare('cv');
      await declare('gone');
      const committed = (
        await ok(
          api().post('/v1/table/batch-commit', {
            operations: [
              { declare_table: { id: ['v', 'fresh'], properties: { made: 'in a batch' } } },
              { create_table_version: { id: ['v', 'cv'], version: 1, manifest_path: stage('cv', 1), metadata: { via: 'batch' } } },
              { delete_table_versions: { id: ['v', 'many'], ranges: [{ start_version: 1, end_version: 2 }] } },
              { deregister_table: { id: ['v', 'gone'] } },
            ],
          }),
        )
      ).body;
      expect(committed.results).toEqual([
        { declare_table: expect.objectContaining({ location: expect.stringMatching(/\/v\/fresh-[0-9a-f]+\.lance$/), properties: { made: 'in a batch' } }) },
        { create_table_version: expect.objectContaining({ version: expect.objectContaining({ version: 1, metadata: { via: 'batch' } }) }) },
        { delete_table_versions: expect.objectContaining({ deleted_count: 1 }) },
        { deregister_table: expect.objectContaining({ id: ['v', 'gone'] }) },
      ]);
      expect((await ok(api().post(`${T('v', 'fresh')}/describe`, { check_declared: true }))).body).toMatchObject({ is_only_declared: true, properties: { made: 'in a batch' } });
      expect(await versionsOf('cv')).toEqual([1]);
      expect(await versionsOf('many')).toEqual([2, 3, 4, 5]);
      expectError(await api().post(`${T('v', 'gone')}/exists`, {}), 404, 4);
      const events = (await ok(api().get(`/v1/history/transaction/${committed.transaction_id}`))).body.events;
      expect(new Set(events.map((e: { transaction_id: string }) => e.transaction_id))).toEqual(new Set([committed.transaction_id]));
      expect((await ok(api().post(`${TX(committed.transaction_id)}/describe`, {}))).body).toMatchObject({ status: 'Succeeded', properties: { operation: 'BatchCommitTables' } });
    },
  );

  covers(['BatchCommitTables#409'], 'one operation in conflict (a version that exists, a name taken) fails the whole batch: 409, nothing applied', async () => {
    const before = await revision(api());
    const res = await api().post('/v1/table/batch-commit', {
      operations: [{ declare_table: { id: ['v', 'never'] } }, { create_table_version: { id: ['v', 'cv'], version: 1, manifest_path: stage('cv', 1) } }],
    });
    expectError(res, 409, 14);
    expectError(await api().post('/v1/table/batch-commit', { operations: [{ declare_table: { id: ['v', 'never'] } }, { declare_table: { id: ['v', 'fresh'] } }] }), 409, 5);
    expect(await revision(api())).toBe(before);
    expectError(await api().post(`${T('v', 'never')}/exists`, {}), 404, 4);
    // The staging manifest of the refused version was not put under a final name.
    expect(statSync(`${locations.get('cv')}/_versions/18446744073709551614.manifest`).size).toBe(manifest.length);
  });
});

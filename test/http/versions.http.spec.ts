import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';

/** Polls until `done` holds (cleanup after an answer runs in the background), for at most 5 s. */
async function waitUntil(done: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 5000; !done(); ) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('version operations over HTTP', () => {
  let server: RunningServer;
  let api: Api;
  const table = (...parts: string[]) => `/v1/table/${Api.id(parts)}`;
  const locations = new Map<string, string>();

  const stage = (location: string, version: number, content = `manifest ${version}`) => {
    mkdirSync(join(location, '_versions'), { recursive: true });
    const path = join(location, '_versions', `${version}.manifest-${Math.random().toString(16).slice(2)}`);
    writeFileSync(path, content);
    return path.slice(1);
  };
  const declare = async (name: string) => {
    const res = await api.post(`${table('v', name)}/declare`, {});
    expect(res.status).toBe(200);
    locations.set(name, res.body.location);
    return res.body.location as string;
  };
  const commit = (name: string, version: number, scheme: 'V1' | 'V2' = 'V2') =>
    api.post(`${table('v', name)}/version/create`, {
      id: ['v', name],
      version,
      manifest_path: stage(locations.get(name)!, version),
      manifest_size: 10,
      e_tag: `etag-${version}`,
      naming_scheme: scheme,
    });

  beforeAll(async () => {
    server = await startServer({ entry: 'api' });
    api = new Api(server.url);
    await api.post(`/v1/namespace/v/create`, {});
  });
  afterAll(() => server?.stop());

  it('creates versions put-if-not-exists and finalises V1 and V2 names', async () => {
    const location = await declare('t1');
    for (const v of [1, 2, 3]) expect((await commit('t1', v)).status).toBe(200);
    const dup = await commit('t1', 2);
    expect([dup.status, dup.body.code]).toEqual([409, 14]);

    await declare('t_v1');
    const v1 = await commit('t_v1', 1, 'V1');
    expect(v1.body.version.manifest_path.endsWith('/_versions/1.manifest')).toBe(true);
    expect(existsSync(`${location}/_versions/18446744073709551612.manifest`)).toBe(true);
  });

  it('finalises a manifest as a hard link to its staging file, then removes the staging name', async () => {
    const location = await declare('linked');
    mkdirSync(join(location, '_versions'), { recursive: true });
    // The name Lance gives a staging manifest: the final name plus a uuid.
    const staging = join(location, '_versions', '18446744073709551614.manifest-2f1c8a4e-9b7d-4c1e-8f3a-5d6e7f8a9b0c');
    writeFileSync(staging, 'the staged bytes');
    const inode = statSync(staging).ino;
    const body = { id: ['v', 'linked'], version: 1, manifest_path: staging.slice(1), naming_scheme: 'V2' };
    const res = await api.post(`${table('v', 'linked')}/version/create`, body);
    expect(res.status).toBe(200);
    const final = `/${res.body.version.manifest_path}`;
    expect(final).toBe(`${location}/_versions/18446744073709551614.manifest`);
    expect(readFileSync(final, 'utf8')).toBe('the staged bytes');
    expect(statSync(final).ino).toBe(inode);
    expect(res.body.version.manifest_size).toBe('the staged bytes'.length);
    await waitUntil(() => !existsSync(staging));

    const retried = await api.post(`${table('v', 'linked')}/version/create`, body);
    expect([retried.status, retried.body.code]).toEqual([409, 14]);
    expect(readFileSync(final, 'utf8')).toBe('the staged bytes');
  });

  it("refuses as a version's staging manifest any file not named as one of that version, recording and removing nothing", async () => {
    const location = await declare('keep');
    expect((await commit('keep', 1)).status).toBe(200);
    const first = `${location}/_versions/18446744073709551614.manifest`;
    const firstBytes = readFileSync(first, 'utf8');
    writeFileSync(`${location}/_versions/latest_version_hint.json`, '{"version":1}');
    const otherStaging = stage(location, 3);
    for (const file of [first, `${location}/_versions/latest_version_hint.json`, `/${otherStaging}`]) {
      const res = await api.post(`${table('v', 'keep')}/version/create`, { id: ['v', 'keep'], version: 2, manifest_path: file.slice(1), naming_scheme: 'V2' });
      expect([res.status, res.body.code]).toEqual([400, 13]);
      expect(res.body.error).toContain('not named as a staging manifest of version 2');
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(readFileSync(first, 'utf8')).toBe(firstBytes);
    expect(existsSync(`/${otherStaging}`)).toBe(true);
    expect(existsSync(`${location}/_versions/18446744073709551613.manifest`)).toBe(false);
    expect((await api.post(`${table('v', 'keep')}/version/list`, null)).body.versions.map((v: any) => v.version)).toEqual([1]);
    // Named in the other scheme it is taken, and removed once recorded, like any staging manifest.
    const inV1 = stage(location, 2);
    const third = await api.post(`${table('v', 'keep')}/version/create`, { id: ['v', 'keep'], version: 2, manifest_path: inV1, naming_scheme: 'V2' });
    expect(third.status).toBe(200);
    await waitUntil(() => !existsSync(`/${inV1}`));
    expect(existsSync(`${location}/_versions/18446744073709551613.manifest`)).toBe(true);
  });

  it('lists versions ascending, descending and by page; the body may be null', async () => {
    const asc = await api.post(`${table('v', 't1')}/version/list`, null);
    expect(asc.body.versions.map((v: any) => v.version)).toEqual([1, 2, 3]);
    expect(asc.body.versions[0]).toMatchObject({ manifest_size: 10, e_tag: 'etag-1' });
    expect(typeof asc.body.versions[0].timestamp_millis).toBe('number');
    const latest = await api.post(`${table('v', 't1')}/version/list?limit=1&descending=true`, null);
    expect(latest.body.versions.map((v: any) => v.version)).toEqual([3]);
    expect(latest.body.page_token).toBe('3');
    const next = await api.post(`${table('v', 't1')}/version/list?limit=1&descending=true&page_token=3`, null);
    expect(next.body.versions.map((v: any) => v.version)).toEqual([2]);
    const empty = await declare('empty');
    expect(empty).toBeDefined();
    expect((await api.post(`${table('v', 'empty')}/version/list`, null)).body.versions).toEqual([]);
    const missing = await api.post(`${table('v', 'nope')}/version/list`, null);
    expect([missing.status, missing.body.code]).toEqual([404, 4]);
  });

  it('describes a version, or the latest when none is named', async () => {
    const two = await api.post(`${table('v', 't1')}/version/describe`, { version: 2 });
    expect(two.body.version.version).toBe(2);
    expect(two.body.version.manifest_path.endsWith('/_versions/18446744073709551613.manifest')).toBe(true);
    expect((await api.post(`${table('v', 't1')}/version/describe`, {})).body.version.version).toBe(3);
    const missing = await api.post(`${table('v', 't1')}/version/describe`, { version: 99 });
    expect([missing.status, missing.body.code]).toEqual([404, 11]);
    const wrongType = await api.post(`${table('v', 't1')}/version/describe`, { version: 'two' });
    expect([wrongType.status, wrongType.body.code]).toEqual([400, 13]);
  });

  it('refuses staging manifests outside the table, and bad versions', async () => {
    const other = await declare('other');
    const foreign = await api.post(`${table('v', 't1')}/version/create`, { version: 4, manifest_path: stage(other, 4) });
    expect([foreign.status, foreign.body.code]).toEqual([400, 13]);
    const escape = await api.post(`${table('v', 't1')}/version/create`, {
      version: 4,
      manifest_path: `${locations.get('t1')!.slice(1)}/_versions/../../x`,
    });
    expect([escape.status, escape.body.code]).toEqual([400, 13]);
    const missingFile = await api.post(`${table('v', 't1')}/version/create`, {
      version: 4,
      manifest_path: `${locations.get('t1')!.slice(1)}/_versions/4.manifest-nothere`,
    });
    expect([missingFile.status, missingFile.body.code]).toEqual([400, 13]);
    const negative = await api.post(`${table('v', 't1')}/version/create`, { version: -4, manifest_path: 'x' });
    expect([negative.status, negative.body.code]).toEqual([400, 13]);
    const noPath = await api.post(`${table('v', 't1')}/version/create`, { version: 4 });
    expect([noPath.status, noPath.body.code]).toEqual([400, 13]);
    expect((await api.post(`${table('v', 't1')}/version/list`, null)).body.versions).toHaveLength(3);
  });

  it('lets exactly one of many racing commits of one version win', async () => {
    await declare('race');
    const racers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        api.post(`${table('v', 'race')}/version/create`, {
          version: 1,
          manifest_path: stage(locations.get('race')!, 1, `racer ${i}`),
        }),
      ),
    );
    expect(racers.filter((r) => r.status === 200)).toHaveLength(1);
    expect(racers.filter((r) => r.status === 409 && r.body.code === 14)).toHaveLength(7);
  });

  it('deletes version records by ranges', async () => {
    await declare('del');
    for (const v of [1, 2, 3, 4, 5]) await commit('del', v);
    const some = await api.post(`${table('v', 'del')}/version/delete`, { ranges: [{ start_version: 2, end_version: 4 }] });
    expect(some.body.deleted_count).toBe(2);
    expect((await api.post(`${table('v', 'del')}/version/list`, null)).body.versions.map((v: any) => v.version)).toEqual([1, 4, 5]);
    const all = await api.post(`${table('v', 'del')}/version/delete`, { ranges: [{ start_version: 0, end_version: -1 }] });
    expect(all.body.deleted_count).toBe(3);
    const bad = await api.post(`${table('v', 'del')}/version/delete`, { ranges: [{ start_version: 0, end_version: -5 }] });
    expect([bad.status, bad.body.code]).toEqual([400, 13]);
    const none = await api.post(`${table('v', 'del')}/version/delete`, {});
    expect([none.status, none.body.code]).toEqual([400, 13]);
  });

  it('creates versions of several tables atomically', async () => {
    await declare('b1');
    await declare('b2');
    const ok = await api.post('/v1/table/version/batch-create', {
      entries: [
        { id: ['v', 'b1'], version: 1, manifest_path: stage(locations.get('b1')!, 1) },
        { id: ['v', 'b2'], version: 1, manifest_path: stage(locations.get('b2')!, 1) },
        { id: ['v', 'b1'], version: 2, manifest_path: stage(locations.get('b1')!, 2) },
      ],
    });
    expect(ok.status).toBe(200);
    expect(ok.body.versions.map((v: any) => v.version)).toEqual([1, 1, 2]);
    expect(typeof ok.body.transaction_id).toBe('string');

    const conflict = await api.post('/v1/table/version/batch-create', {
      entries: [
        { id: ['v', 'b2'], version: 2, manifest_path: stage(locations.get('b2')!, 2) },
        { id: ['v', 'b1'], version: 2, manifest_path: stage(locations.get('b1')!, 2, 'other') },
      ],
    });
    expect([conflict.status, conflict.body.code]).toEqual([409, 14]);
    expect((await api.post(`${table('v', 'b2')}/version/list`, null)).body.versions.map((v: any) => v.version)).toEqual([1]);
    expect(existsSync(`${locations.get('b2')}/_versions/18446744073709551613.manifest`)).toBe(false);
  });

  it('commits mixed operations atomically, with results in request order', async () => {
    await declare('m1');
    await commit('m1', 1);
    await declare('m2');
    const res = await api.post('/v1/table/batch-commit', {
      operations: [
        { declare_table: { id: ['v', 'm_new'] } },
        { create_table_version: { id: ['v', 'm1'], version: 2, manifest_path: stage(locations.get('m1')!, 2) } },
        { delete_table_versions: { id: ['v', 'm1'], ranges: [{ start_version: 1, end_version: 2 }] } },
        { deregister_table: { id: ['v', 'm2'] } },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(4);
    expect(res.body.results[0].declare_table.location).toContain('m_new');
    expect(res.body.results[1].create_table_version.version.version).toBe(2);
    expect(res.body.results[2].delete_table_versions.deleted_count).toBe(1);
    expect(res.body.results[3].deregister_table.id).toEqual(['v', 'm2']);
    expect((await api.post(`${table('v', 'm2')}/exists`, {})).status).toBe(404);

    const failing = await api.post('/v1/table/batch-commit', {
      operations: [{ declare_table: { id: ['v', 'm_other'] } }, { deregister_table: { id: ['v', 'm2'] } }],
    });
    expect([failing.status, failing.body.code]).toEqual([404, 4]);
    expect((await api.post(`${table('v', 'm_other')}/exists`, {})).status).toBe(404);

    const twoKinds = await api.post('/v1/table/batch-commit', {
      operations: [{ declare_table: { id: ['v', 'z'] }, deregister_table: { id: ['v', 'm1'] } }],
    });
    expect([twoKinds.status, twoKinds.body.code]).toEqual([400, 13]);
  });

  it('records a transaction for every mutating operation', async () => {
    const declared = await api.post(`${table('v', 'tx')}/declare`, {});
    const tx = await api.post(`/v1/transaction/${declared.body.transaction_id}/describe`, {});
    expect(tx.status).toBe(200);
    expect(tx.body.status).toBe('Succeeded');
    expect(tx.body.properties.operation).toBe('DeclareTable');
    const missing = await api.post(`/v1/transaction/00000000-0000-0000-0000-000000000000/describe`, {});
    expect([missing.status, missing.body.code]).toEqual([404, 10]);
  });

  it('alters transactions all-or-nothing and refuses to move a final status', async () => {
    const declared = await api.post(`${table('v', 'tx2')}/declare`, {});
    const id = declared.body.transaction_id;
    const props = await api.post(`/v1/transaction/${id}/alter`, {
      actions: [
        { setPropertyAction: { key: 'owner', value: 'ops' } },
        { setPropertyAction: { key: 'note', value: 'x' } },
        { unsetPropertyAction: { key: 'note' } },
      ],
    });
    expect(props.status).toBe(200);
    expect(props.body.properties.owner).toBe('ops');
    expect(props.body.properties.note).toBeUndefined();

    const refused = await api.post(`/v1/transaction/${id}/alter`, {
      actions: [{ setPropertyAction: { key: 'later', value: 'y' } }, { setStatusAction: { status: 'running' } }],
    });
    expect([refused.status, refused.body.code]).toEqual([409, 19]);
    const failMode = await api.post(`/v1/transaction/${id}/alter`, {
      actions: [{ setPropertyAction: { key: 'later', value: 'y' } }, { setPropertyAction: { key: 'owner', value: 'z', mode: 'fail' } }],
    });
    expect([failMode.status, failMode.body.code]).toEqual([400, 13]);
    const after = await api.post(`/v1/transaction/${id}/describe`, {});
    expect(after.body.properties.later).toBeUndefined();
    expect(after.body.properties.owner).toBe('ops');
    expect(after.body.status).toBe('Succeeded');

    const badStatus = await api.post(`/v1/transaction/${id}/alter`, { actions: [{ setStatusAction: { status: 'Exploded' } }] });
    expect([badStatus.status, badStatus.body.code]).toEqual([400, 13]);
    const empty = await api.post(`/v1/transaction/${id}/alter`, { actions: [] });
    expect([empty.status, empty.body.code]).toEqual([400, 13]);
  });
});

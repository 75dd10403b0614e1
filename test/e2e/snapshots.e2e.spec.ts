import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Api } from '../support/http';
import { RunningServer, startServer, tempDataDir } from '../support/server';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '../..');

/** What a client sees of the catalog: every table's describe and versions, and every namespace. */
async function answers(api: Api) {
  const tables = (await api.get('/v1/namespace/s/table/list')).body.tables as string[];
  const seen: Record<string, unknown> = { namespaces: (await api.get('/v1/namespace/%24/list')).body, tables };
  for (const t of tables) {
    const id = Api.id(['s', t]);
    seen[t] = {
      describe: (await api.post(`/v1/table/${id}/describe`, {})).body,
      versions: (await api.post(`/v1/table/${id}/version/list`, null)).body,
    };
  }
  return seen;
}

describe('snapshots of the folded state', () => {
  const dataDir = tempDataDir();
  const env = { SNAPSHOT_EVERY: '25' };
  let server: RunningServer | undefined;
  afterAll(() => server?.stop());

  /** Writes: namespaces, tables, versions (with their staging manifests) and a transaction change. */
  async function write(api: Api, round: number) {
    expect((await api.post(`/v1/namespace/r${round}/create`, {})).status).toBe(200);
    for (let t = 0; t < 4; t++) {
      const declared = await api.post(`/v1/table/${Api.id(['s', `r${round}t${t}`])}/declare`, {});
      expect(declared.status).toBe(200);
      const location = declared.body.location as string;
      for (let v = 1; v <= 3; v++) {
        mkdirSync(join(location, '_versions'), { recursive: true });
        const staging = join(location, '_versions', `${v}.manifest-${Math.random().toString(16).slice(2)}`);
        writeFileSync(staging, `manifest ${v}`);
        const created = await api.post(`/v1/table/${Api.id(['s', `r${round}t${t}`])}/version/create`, {
          version: v,
          manifest_path: staging.slice(1),
          manifest_size: 10,
          ...(v === 2 ? { e_tag: `e${v}` } : {}),
        });
        expect(created.status).toBe(200);
      }
    }
  }

  it('a restarted server starts from its snapshot and answers exactly as before, with the same digest', async () => {
    server = await startServer({ dataDir, entry: 'api', env });
    const api = new Api(server.url);
    expect((await api.post('/v1/namespace/s/create', {})).status).toBe(200);
    await write(api, 1);
    await write(api, 2);
    const before = await answers(api);
    const digest = (await api.get('/v1/history/digest')).body;
    await server.stop();
    expect(server.output()).toMatch(new RegExp(`snapshot of 'default' at revision ${digest.revision} written`));
    expect(existsSync(join(dataDir, 'snapshots', 'default.snapshot'))).toBe(true);

    server = await startServer({ dataDir, entry: 'api', env });
    const again = new Api(server.url);
    expect(await answers(again)).toEqual(before);
    expect(server.output()).toContain(`restored 'default' from its snapshot at revision ${digest.revision}`);
    expect((await again.get('/v1/history/digest')).body).toEqual(digest);
  });

  it('keeps folding after the snapshot, and replay of the whole log gives the same digest', async () => {
    const api = new Api(server!.url);
    await write(api, 3);
    const digest = (await api.get('/v1/history/digest')).body;
    await server!.stop();
    server = undefined;

    const replay = JSON.parse((await run(process.execPath, [join(ROOT, 'dist/apps/api/src/replay.js')], { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir } })).stdout);
    const replayed = replay.databases.find((d: { database: string }) => d.database === 'default');
    expect(replay.events).toBe(digest.revision + 1);
    expect(replayed.digest).toBe(digest.digest);
  });

  it('a damaged snapshot is ignored: the log is folded from the start, to the same digest', async () => {
    const file = join(dataDir, 'snapshots', 'default.snapshot');
    const bytes = readFileSync(file);
    bytes[bytes.length - 10] ^= 0xff;
    writeFileSync(file, bytes);
    const replay = JSON.parse((await run(process.execPath, [join(ROOT, 'dist/apps/api/src/replay.js')], { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir } })).stdout);

    server = await startServer({ dataDir, entry: 'api', env });
    const digest = (await new Api(server.url).get('/v1/history/digest')).body;
    expect(server.output()).toContain("ignoring the snapshot of 'default': checksum mismatch");
    expect(server.output()).not.toContain('restored');
    expect(digest.digest).toBe(replay.databases[0].digest);
  });
});

/**
 * `vend_credentials`, which only means something on an object store: a warehouse on S3 (an endpoint
 * nothing serves, since declaring and describing read no table file) whose clients are handed
 * static credentials (CLIENT_STORAGE_OPTIONS).
 */
import { freePort } from '../../support/ports';
import { RunningServer, startServer } from '../../support/server';
import { Api, NS, T, ok } from './fixtures';
import { covers } from './coverage';

describe('vended credentials, field by field', () => {
  let server: RunningServer;
  let api: Api;
  const credentials = { aws_access_key_id: 'client-key', aws_secret_access_key: 'client-secret' };

  beforeAll(async () => {
    server = await startServer({
      entry: 'api',
      env: {
        ACCESS_LOG: 'off',
        WAREHOUSE: 's3://warehouse/lance',
        AWS_ENDPOINT_URL: `http://127.0.0.1:${await freePort()}`,
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'catalog-key',
        AWS_SECRET_ACCESS_KEY: 'catalog-secret',
        CLIENT_STORAGE_OPTIONS: JSON.stringify(credentials),
      },
    });
    api = new Api(server.url);
    await ok(api.post(`${NS('s')}/create`, {}));
  }, 60_000);
  afterAll(() => server?.stop());

  const reach = { aws_region: 'us-east-1', allow_http: 'true' };

  covers(['DeclareTable.vend_credentials'], "answers the store's credentials with the declared table, none with vend_credentials: false", async () => {
    for (const body of [{}, { vend_credentials: true }]) {
      const declared = (await ok(api.post(`${T('s', `d${Object.keys(body).length}`)}/declare`, body))).body;
      expect(declared.location).toMatch(/^s3:\/\/warehouse\/lance\/default\/s\//);
      expect(declared.storage_options).toMatchObject({ ...reach, ...credentials });
    }
    const bare = (await ok(api.post(`${T('s', 'bare')}/declare`, { vend_credentials: false }))).body.storage_options;
    expect(bare).toMatchObject(reach);
    expect(bare).not.toHaveProperty('aws_access_key_id');
    expect(bare).not.toHaveProperty('aws_secret_access_key');
  });

  covers(['DescribeTable.vend_credentials'], "answers the store's credentials, none with vend_credentials: false", async () => {
    for (const body of [{}, { vend_credentials: true }]) {
      expect((await ok(api.post(`${T('s', 'd0')}/describe`, body))).body.storage_options).toMatchObject({ ...reach, ...credentials });
    }
    const bare = (await ok(api.post(`${T('s', 'd0')}/describe`, { vend_credentials: false }))).body.storage_options;
    expect(bare).toMatchObject(reach);
    expect(Object.keys(bare)).not.toEqual(expect.arrayContaining(['aws_access_key_id']));
  });
});

import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';

describe('audit history and request context', () => {
  let server: RunningServer;
  let api: Api;

  beforeAll(async () => {
    // Webhooks configured, private networks not allowed (the default): subscriptions' URLs are guarded.
    server = await startServer({ entry: 'api', env: { WEBHOOK_SECRET_KEY: 'a-history-key-of-at-least-thirty-two-characters' } });
    api = new Api(server.url);
  });
  afterAll(() => server?.stop());

  it('records x-lance-ctx headers and body context with the events and echoes the headers', async () => {
    const res = await api.post('/v1/namespace/audit/create', { context: { ticket: 'T-1' } }, { 'x-lance-ctx-user': 'alice' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-lance-ctx-user')).toBe('alice');
    const history = await api.get('/v1/history/namespace/audit');
    expect(history.status).toBe(200);
    expect(history.body.events).toHaveLength(1);
    expect(history.body.events[0]).toMatchObject({
      type: 'NamespaceCreated',
      operation: 'CreateNamespace',
      transaction_id: res.body.transaction_id,
      context: { ticket: 'T-1', user: 'alice' },
    });
    expect(Number.isNaN(Date.parse(history.body.events[0].timestamp))).toBe(false);
  });

  it('follows a table across renames, drops and re-creation, in order', async () => {
    await api.post('/v1/table/audit%24t/declare', {});
    await api.post('/v1/table/audit%24t/rename', { new_table_name: 'u' });
    await api.post('/v1/table/audit%24u/rename', { new_table_name: 't' });
    await api.post('/v1/table/audit%24t/drop', {});
    await api.post('/v1/table/audit%24t/declare', {}, { 'x-lance-ctx-why': 'again' });
    const history = await api.get('/v1/history/table/audit%24t');
    expect(history.body.events.map((e: { type: string }) => e.type)).toEqual([
      'TableDeclared',
      'TableRenamed',
      'TableRenamed',
      'TableDropped',
      'TablePurgeScheduled',
      'TableDeclared',
    ]);
    const revisions = history.body.events.map((e: { revision: number }) => e.revision);
    expect([...revisions].sort((x, y) => x - y)).toEqual(revisions);
    expect(history.body.events[5].context).toEqual({ why: 'again' });

    const paged = await api.get('/v1/history/table/audit%24t?limit=2');
    expect(paged.body.events).toHaveLength(2);
    const rest = await api.get(`/v1/history/table/audit%24t?page_token=${paged.body.page_token}`);
    expect(rest.body.events).toHaveLength(4);
    expect(rest.body.page_token).toBeNull();

    const missing = await api.get('/v1/history/table/audit%24never');
    expect([missing.status, missing.body.code]).toEqual([404, 4]);
  });

  it('shows what a transaction did and every change made to it', async () => {
    await api.post('/v1/namespace/cascade/create', {});
    await api.post('/v1/table/cascade%24a/declare', {});
    await api.post('/v1/table/cascade%24b/declare', {});
    const dropped = await api.post('/v1/namespace/cascade/drop', { behavior: 'Cascade' });
    const id = dropped.body.transaction_id[0];
    await api.post(`/v1/transaction/${id}/alter`, { actions: [{ setPropertyAction: { key: 'reviewed', value: 'yes' } }] });
    const history = await api.get(`/v1/history/transaction/${id}`);
    expect(history.body.events.map((e: { type: string }) => e.type)).toEqual([
      'TableDropped',
      'TablePurgeScheduled',
      'TableDropped',
      'TablePurgeScheduled',
      'NamespaceDropped',
      'TransactionAltered',
    ]);
    const missing = await api.get('/v1/history/transaction/nope');
    expect([missing.status, missing.body.code]).toEqual([404, 10]);
  });

  it('refuses a webhook URL that resolves inside the network at creation, and records nothing', async () => {
    for (const url of ['http://127.0.0.1:9/in', 'http://localhost:9/in', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]/in', 'http://[::ffff:10.0.0.1]/in', 'http://10.1.2.3/in']) {
      const refused = await api.post('/v1/subscriptions/create', { url });
      expect([url, refused.status, refused.body.code]).toEqual([url, 400, 13]);
      expect(refused.body.error).toMatch(/loopback, private or link-local address \(WEBHOOK_ALLOW_PRIVATE_NETWORKS is off\)/);
    }
    expect((await api.post('/v1/subscriptions/list', {})).body.subscriptions).toEqual([]);
    const log = (await api.get('/v1/history/database?limit=1000')).body.events as Array<{ type: string }>;
    expect(log.filter((e) => e.type.startsWith('WebhookSubscription'))).toEqual([]);
  });
});

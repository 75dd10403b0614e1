/**
 * `Op#503` for every operation of the spec: with the event store unreachable (an EventStoreDB URL
 * where nothing listens), each answers 503 code 17 with `Retry-After`, as the spec's "wait and
 * retry" asks, instead of failing or answering from stale state.
 */
import { freePort } from '../../support/ports';
import { RunningServer, startServer } from '../../support/server';
import { Api, expectError } from './fixtures';
import { covers, exemptions, specOperations } from './coverage';
import { CALLS, requestOf } from './operations';

const EXEMPT = new Set(exemptions().flatMap((e) => e.tokens));

describe('every operation while the event store is unreachable', () => {
  let server: RunningServer;
  let api: Api;
  beforeAll(async () => {
    server = await startServer({ entry: 'api', env: { EVENT_STORE: `esdb://127.0.0.1:${await freePort()}?tls=false`, ACCESS_LOG: 'off' } });
    api = new Api(server.url);
  }, 60_000);
  afterAll(() => server?.stop());

  for (const op of specOperations()) {
    if (!op.statuses.includes('503') || EXEMPT.has(`${op.operationId}#503`)) continue;
    covers([`${op.operationId}#503`], 'the event store is unreachable: 503 code 17 with Retry-After', async () => {
      const call = CALLS[op.operationId];
      // Materialized views live in the root namespace: a view id elsewhere is refused whatever the store holds.
      const id = call.subject === 'namespace' ? ['g'] : op.operationId === 'CreateMaterializedView' ? ['v'] : ['g', 't'];
      const r = requestOf(call, call.subject === 'transaction' ? '6f1c2a9e-0000-4000-8000-000000000000' : Api.id(id));
      const res = await api.send<any>(r.method, r.url, r.body, r.headers);
      expectError(res, 503, 17);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    });
  }
});

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ARROW_STREAM, arrowStream, sampleTable, waitFor } from '../support/arrow-data';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';
import { FINAL, MAINTENANCE_ENV, maintenanceSuite, manifestVersions } from '../support/table-maintenance-suite';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The same suite on Swift, and a branch repaired there, run in `npm run check:long`.
maintenanceSuite('table maintenance on a local warehouse', async () => {
  const server = await startServer({ env: MAINTENANCE_ENV });
  const manifests = async (location: string, branch?: string) => manifestVersions(readdirSync(join(location, ...(branch ? ['tree', branch] : []), '_versions')));
  return { server, manifests };
});

describe('the maintenance planner and writers that never pause', () => {
  let server: RunningServer;
  let api: Api;

  // Commits must pause for a minute before the planner looks, and its first sweep is a minute away:
  // only the longest delay can have it look at a table whose writers go on.
  beforeAll(async () => {
    server = await startServer({ env: { MAINTENANCE_PLAN_DELAY_MS: '60000', MAINTENANCE_PLAN_MAX_DELAY_MS: '3000' } });
    api = new Api(server.url);
    expect((await api.post('/v1/namespace/w/create', {})).status).toBe(200);
  }, 120_000);
  afterAll(() => server?.stop());

  it('compacts a table its writers append to without a pause, once the longest delay has passed', async () => {
    expect((await api.send('POST', '/v1/table/w%24steady/create', arrowStream(sampleTable(0, 10)), ARROW_STREAM)).status).toBe(200);
    const started = Date.now();
    let rows = 10;
    let job: any;
    while (!job && Date.now() - started < 40_000) {
      const inserted = await api.send('POST', '/v1/table/w%24steady/insert', arrowStream(sampleTable(rows, 10)), ARROW_STREAM);
      expect(inserted.status).toBe(200);
      rows += 10;
      const described = (await api.post('/v1/table/w%24steady/maintenance/describe', {})).body;
      if (described.last_job?.properties?.maintenance === 'compact') job = described.last_job;
      await pause(200);
    }
    expect(job).toMatchObject({ properties: { maintenance: 'compact', requested_by: 'planner' } });
    const settled = await waitFor(() => api.post('/v1/table/w%24steady/maintenance/describe', {}).then((r) => r.body.last_job), (j) => FINAL.includes(j.status), 60_000);
    expect(settled.status).toBe('Succeeded');
    expect(Number(settled.properties.fragments_before)).toBeGreaterThan(16);
    expect(Number((await api.post('/v1/table/w%24steady/count_rows', {})).text)).toBe(rows);
  }, 120_000);
});

import { versionsDir } from '@app/catalog';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { closeClient, median, post, report, send, stagingManifestName, startServer, timedWithCpu } from './support';

/**
 * What a Lance client asks before each read and commit of a managed table, `version/list` with
 * `limit=1&descending=true` (its latest version), on tables of VERSIONS versions, beside
 * DescribeTable of the same table as the same-run baseline: the server's CPU per call, one call
 * at a time over one keep-alive connection, the two taking turns of TURN calls. The latest
 * version should cost the same whatever the table's history holds.
 */
const VERSIONS = (process.env.BENCH_LIST_VERSIONS ?? '30,300,3000').split(',').map(Number);
const TURNS = Number(process.env.BENCH_LIST_TURNS ?? 8);
const TURN = Number(process.env.BENCH_LIST_TURN ?? 1000);
/** Untimed calls of each kind first, so that no turn runs code V8 has not optimised yet. */
const WARM = Number(process.env.BENCH_LIST_WARM ?? 4000);
const MANIFEST = 'x'.repeat(4096);

async function main(): Promise<void> {
  const server = await startServer({}, 'dist/apps/api/src/main.js');
  try {
    await post(`${server.url}/v1/namespace/v/create`, {});
    const rows: Array<Record<string, string | number>> = [];
    for (const [t, versions] of VERSIONS.entries()) {
      const table = `${server.url}/v1/table/v%24t${t}`;
      const dir = versionsDir((await post(`${table}/declare`, {})).location);
      mkdirSync(dir, { recursive: true });
      for (let version = 1; version <= versions; version++) {
        const staging = join(dir, stagingManifestName(version));
        writeFileSync(staging, MANIFEST);
        await post(`${table}/version/create`, { version, manifest_path: staging.slice(1) });
      }
      const call = async (url: string, body: string) => {
        const res = await send(url, 'application/json', Buffer.from(body));
        if (res.status !== 200) throw new Error(`${url}: ${res.status} ${res.body.toString()}`);
      };
      const sides = {
        describe: () => call(`${table}/describe`, '{}'),
        // As the lancedb client sends it: the body is the literal `null`.
        latest: () => call(`${table}/version/list?delimiter=%24&limit=1&descending=true`, 'null'),
      };
      const cpu: Record<keyof typeof sides, number[]> = { describe: [], latest: [] };
      for (const side of Object.values(sides)) for (let i = 0; i < WARM; i++) await side();
      for (let turn = 0; turn < TURNS; turn++) {
        for (const name of (turn % 2 ? ['latest', 'describe'] : ['describe', 'latest']) as Array<keyof typeof sides>) {
          const { user, system } = await timedWithCpu(server.pid, async () => {
            for (let i = 0; i < TURN; i++) await sides[name]();
          });
          cpu[name].push((user + system) / TURN);
        }
      }
      const [describe, latest] = [median(cpu.describe), median(cpu.latest)];
      rows.push({
        'table versions': versions,
        'DescribeTable µs/call (baseline)': describe.toFixed(0),
        'version/list, latest, µs/call': latest.toFixed(0),
        ratio: (latest / describe).toFixed(2),
      });
    }
    report(`The latest version of a managed table, as a Lance client asks for it: server CPU per call, median of ${TURNS} turns of ${TURN}`, rows);
  } finally {
    await server.stop();
    closeClient();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

import * as lancedb from '@lancedb/lancedb';
import * as arrow from 'apache-arrow';
import { cpSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { BenchServer, closeClient, post, postArrow, postForBytes, report, scratchDir, settle, startServer, timed, vectorTable } from './support';

/**
 * A table after BENCH_APPENDS appends (default 1,000) of BENCH_ROWS rows (100) made by the lancedb
 * client through the catalog, on a server whose planner is off ("before") and on one with default
 * settings, whose planner compacts it with no call from the client ("after"), beside a table written
 * in one batch: QueryTable p50 and CountTableRows p50, fragments, files and bytes on storage. Then
 * the compaction job through the catalog on the "before" table, against lancedb's own optimize()
 * run directly on a copy of that table's directory.
 */
const APPENDS = Number(process.env.BENCH_APPENDS ?? 1000);
const ROWS = Number(process.env.BENCH_ROWS ?? 100);
const DIM = Number(process.env.BENCH_DIM ?? 16);
const CALLS = Number(process.env.BENCH_CALLS ?? 100);

async function appendAll(server: BenchServer, name: string): Promise<string> {
  const db = await lancedb.connectNamespace('rest', { uri: server.url });
  const table = await db.createTable(name, vectorTable(0, ROWS, DIM), ['m']);
  for (let i = 1; i < APPENDS; i++) await table.add(vectorTable(i * ROWS, ROWS, DIM));
  table.close();
  db.close();
  return (await post(`${server.url}/v1/table/m%24${name}/describe`, {})).location;
}

function onDisk(location: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else {
        files++;
        bytes += statSync(p).size;
      }
    }
  };
  walk(location);
  return { files, bytes };
}

type Measured = { server: BenchServer; name: string; location: string };

/**
 * QueryTable and CountTableRows p50 of each table, the calls taken in turns across the tables so
 * that a change in the machine's load over the run weighs on each of them alike.
 */
async function measure(tables: Measured[]) {
  const probe = Array.from(vectorTable(7, 1, DIM).getChild('vector')!.get(0) as Float32Array);
  const query = (t: Measured) => async () => arrow.tableFromIPC(await postForBytes(`${t.server.url}/v1/table/m%24${t.name}/query`, { vector: { single_vector: probe }, k: 10 }));
  const count = (t: Measured) => () => postForBytes(`${t.server.url}/v1/table/m%24${t.name}/count_rows`, { predicate: 'id > 1000' });
  const p50 = async (call: (t: Measured) => () => Promise<unknown>) => {
    const ms = tables.map(() => [] as number[]);
    for (let i = 0; i < 10 + CALLS; i++) {
      for (const [k, t] of tables.entries()) {
        const took = (await timed(call(t))).ms;
        if (i >= 10) ms[k].push(took);
      }
    }
    return ms.map((m) => m.sort((a, b) => a - b)[Math.floor(m.length / 2)]);
  };
  const queries = await p50(query);
  const counts = await p50(count);
  // The same calls on each table's directory opened by lancedb in this process: what Lance itself makes of each layout.
  const direct = await Promise.all(tables.map(async (t) => (await lancedb.connect(dirname(t.location))).openTable(basename(t.location, '.lance'))));
  const directQueries = await p50((t) => () => direct[tables.indexOf(t)].query().nearestTo(probe).limit(10).toArrow());
  const directCounts = await p50((t) => () => direct[tables.indexOf(t)].countRows('id > 1000'));
  for (const d of direct) d.close();
  return Promise.all(
    tables.map(async (t, k) => {
      const state = await post(`${t.server.url}/v1/table/m%24${t.name}/maintenance/describe`, {});
      return { query: queries[k], count: counts[k], directQuery: directQueries[k], directCount: directCounts[k], fragments: state.latest_version.fragments as number, ...onDisk(t.location) };
    }),
  );
}

async function main(): Promise<void> {
  const before = await startServer({ MAINTENANCE_PLANNER: 'false' });
  const after = await startServer();
  try {
    for (const s of [before, after]) await post(`${s.url}/v1/namespace/m/create`, {});
    const [beforeLocation, afterLocation] = await Promise.all([appendAll(before, 'appended'), appendAll(after, 'appended')]);
    // The planner looks once the commits pause; wait until its jobs are done and it asks for no more.
    let quiet = 0;
    for (let waited = 0; quiet < 3 && waited < 300; waited++) {
      const state = await post(`${after.url}/v1/table/m%24appended/maintenance/describe`, {});
      quiet = state.last_job && ['Succeeded', 'Failed'].includes(state.last_job.status) ? quiet + 1 : 0;
      await new Promise((r) => setTimeout(r, 1000));
    }
    // On the server whose planner ran, so the two tables it is compared with share a process.
    await postArrow(`${after.url}/v1/table/m%24fresh/create`, vectorTable(0, APPENDS * ROWS, DIM));
    const freshLocation = (await post(`${after.url}/v1/table/m%24fresh/describe`, {})).location;
    const measured = await measure([
      { server: after, name: 'fresh', location: freshLocation },
      { server: before, name: 'appended', location: beforeLocation },
      { server: after, name: 'appended', location: afterLocation },
    ]);
    const rows = [
      ['one batch of the same rows (baseline)', measured[0]],
      [`${APPENDS} appends, no maintenance`, measured[1]],
      [`${APPENDS} appends, after the planner (default settings, no call from the client)`, measured[2]],
    ] as const;
    const base = rows[0][1];
    report(`A table after ${APPENDS} appends of ${ROWS} rows (${DIM}-d vectors) by the lancedb client`, rows.map(([what, m]) => ({
      table: what,
      'query p50 ms': m.query.toFixed(2),
      'query ratio': (m.query / base.query).toFixed(2),
      'count p50 ms': m.count.toFixed(2),
      'count ratio': (m.count / base.count).toFixed(2),
      'lancedb query p50 ms': m.directQuery.toFixed(2),
      'lancedb query ratio': (m.directQuery / base.directQuery).toFixed(2),
      'lancedb count p50 ms': m.directCount.toFixed(2),
      'lancedb count ratio': (m.directCount / base.directCount).toFixed(2),
      fragments: m.fragments,
      files: m.files,
      'MB on storage': (m.bytes / 1e6).toFixed(1),
    })));

    // The compaction job on the unmaintained table, against lancedb's optimize() on a copy of it.
    const copy = join(scratchDir('bench-maint-copy-'), 'appended.lance');
    cpSync(beforeLocation, copy, { recursive: true });
    const direct = await (await lancedb.connect(join(copy, '..'))).openTable('appended');
    const lance = await timed(() => direct.optimize({ cleanupOlderThan: new Date(0) }));
    direct.close();
    const job = await timed(async () => {
      const res = await fetch(`${before.url}/v1/table/m%24appended/maintenance/compact`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      if (res.status !== 202) throw new Error(`compact answered ${res.status}: ${await res.text()}`);
      const { job_id } = (await res.json()) as { job_id: string };
      const tx = await settle(before.url, job_id);
      if (tx.status !== 'Succeeded') throw new Error(JSON.stringify(tx));
      return tx;
    });
    report(`Compacting the ${APPENDS}-fragment table`, [
      { path: "lancedb's optimize() on a copy of the directory (baseline)", ms: lance.ms.toFixed(0), ratio: '1.00' },
      { path: 'the compaction job through the catalog, request to Succeeded', ms: job.ms.toFixed(0), ratio: (job.ms / lance.ms).toFixed(2) },
      { path: "the job's own work (took_ms)", ms: job.value.properties.took_ms, ratio: (Number(job.value.properties.took_ms) / lance.ms).toFixed(2) },
    ]);
  } finally {
    closeClient();
    await before.stop();
    await after.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

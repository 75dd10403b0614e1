import { versionsDir } from '@app/catalog';
import { SqliteEventStore } from '@app/event-store';
import { ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { JsMsg, NatsConnection, connect, consumerOpts } from 'nats';
import { closeClient, cpuOf, post, report, scratchDir, send, stagingManifestName, startServer } from './support';

/**
 * The change feed to NATS JetStream: the lag from a commit's answer (version/create, answered
 * once its TableVersionCreated is durable) to its event in JetStream as a consumer of the stream
 * gets it, at BENCH_FEED_RATE commits a second (1,000) for BENCH_SECONDS (10) over BENCH_TABLES
 * tables, and the server CPU a commit costs with it and without (the same load on a server without
 * a feed, in BENCH_ROUNDS turns each); then the publisher's events a second catching up a backlog of BENCH_FEED_BACKLOG events
 * (NATS stopped while they were appended), against how fast the log itself reads them back (the
 * embedded store's readStream, in the publisher's pages of 256).
 */
const RATE = Number(process.env.BENCH_FEED_RATE ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const TABLES = Number(process.env.BENCH_TABLES ?? 16);
const BACKLOG = Number(process.env.BENCH_FEED_BACKLOG ?? 20_000);
/** The seconds are cut in this many turns, each a turn without the feed then one with it. */
const TURNS = Number(process.env.BENCH_ROUNDS ?? 5);
/** Seconds both servers stand by with no request, measured (CPU ticks are 10 ms: figures to 10 / IDLE_S ms a second). */
const IDLE_S = Number(process.env.BENCH_FEED_IDLE_S ?? 20);
const NATS_SERVER = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';
const STREAM = 'BENCH_FEED';
const MANIFEST = 'x'.repeat(4096);

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A nats-server -js of the bench's own, on a free port with its store in a scratch directory. */
async function startNats(port: number, storeDir: string): Promise<ChildProcess> {
  const child = spawn(NATS_SERVER, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  for (let waited = 0; !/Server is ready/.test(output); waited += 25) {
    if (waited > 20_000 || child.exitCode !== null) throw new Error(`nats-server did not start: ${output}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return child;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** Every event of the stream from now on, with when this process got it (an ordered push consumer of JetStream). */
async function follow(nc: NatsConnection, seen: Map<string, number>): Promise<() => void> {
  const opts = consumerOpts().orderedConsumer().deliverNew().filterSubject('lance.catalog.default.>');
  const subscription = await nc.jetstream().subscribe('lance.catalog.default.>', opts);
  void (async () => {
    for await (const m of subscription as AsyncIterable<JsMsg>) {
      const at = performance.now();
      const event = m.json<{ type: string; data: { data: { table: string[]; version: number } } }>();
      if (event.type === 'lance.catalog.TableVersionCreated') seen.set(`${event.data.data.table.join('$')}@${event.data.data.version}`, at);
      else seen.set(`other@${seen.size}`, at);
    }
  })();
  return () => subscription.unsubscribe();
}

/** Declares TABLES tables; the i-th commit writes a staging manifest and commits it as the next version of a table drawn at random. */
async function commitsTo(url: string): Promise<() => Promise<{ key: string; answered: number }>> {
  await post(`${url}/v1/namespace/c/create`, {});
  const locations: string[] = [];
  for (let t = 0; t < TABLES; t++) locations.push((await post(`${url}/v1/table/c%24t${t}/declare`, {})).location);
  for (const location of locations) mkdirSync(versionsDir(location), { recursive: true });
  const versions = new Array(TABLES).fill(0);
  return async () => {
    const t = Math.floor(Math.random() * TABLES);
    const version = ++versions[t];
    const staging = join(versionsDir(locations[t]), stagingManifestName(version));
    writeFileSync(staging, MANIFEST);
    const res = await send(`${url}/v1/table/c%24t${t}/version/create`, 'application/json', Buffer.from(JSON.stringify({ version, manifest_path: staging.slice(1) })));
    const answered = performance.now();
    if (res.status !== 200) throw new Error(`version/create: ${res.status} ${res.body.toString()}`);
    return { key: `c$t${t}@${version}`, answered };
  };
}

/** Open loop: RATE commits a second for SECONDS, sent on a 10 ms beat whatever the answers' pace; the server's CPU meanwhile. */
async function load(commit: () => Promise<{ key: string; answered: number }>, pids: number[], forSeconds: number) {
  const answers: Array<Promise<{ key: string; answered: number }>> = [];
  const cpuBefore = pids.map(cpuOf);
  const started = performance.now();
  const perBeat = RATE / 100;
  let owed = 0;
  await new Promise<void>((resolve) => {
    const beat = setInterval(() => {
      if (performance.now() - started >= forSeconds * 1000) {
        clearInterval(beat);
        return resolve();
      }
      owed += perBeat;
      for (; owed >= 1; owed--) answers.push(commit());
    }, 10);
  });
  const done = await Promise.all(answers);
  const seconds = (performance.now() - started) / 1000;
  const cpuUs = pids.map((pid, i) => cpuOf(pid) - cpuBefore[i]);
  return { done, seconds, cpuUs };
}

async function main(): Promise<void> {
  const natsPort = await freePort();
  const natsDir = scratchDir('lance-bench-nats-');
  let nats = await startNats(natsPort, natsDir);
  const plain = await startServer({ DATA_PLANE_PROCESSES: '0', ACCESS_LOG: 'off' });
  const server = await startServer({
    CHANGE_FEED_NATS_URL: `nats://127.0.0.1:${natsPort}`,
    CHANGE_FEED_NATS_STREAM: STREAM,
    DATA_PLANE_PROCESSES: '0',
    ACCESS_LOG: 'off',
  });
  const nc = await connect({ servers: `nats://127.0.0.1:${natsPort}` });
  try {
    // The same load on a server without a change feed, in turns with the one publishing: what
    // publishing adds to a commit's CPU (the machine's speed moves; turns share its moves).
    const plainCommit = await commitsTo(plain.url);
    const commit = await commitsTo(server.url);
    // The stream exists once the publisher has published: wait for the declarations to be there.
    for (let i = 0; ; i++) {
      const info = await (await nc.jetstreamManager()).streams.info(STREAM).catch(() => undefined);
      if (info && info.state.messages >= TABLES + 1) break;
      if (i > 200) throw new Error('the change feed published nothing to JetStream');
      await new Promise((r) => setTimeout(r, 50));
    }
    // Standing by with no request: what a feed that is set up costs an idle server (its lease's
    // renewals, the store's subscription), beside one without a feed, which builds none of it.
    const idleBefore = [cpuOf(plain.pid), cpuOf(server.pid)];
    await new Promise((r) => setTimeout(r, IDLE_S * 1000));
    const idle = [cpuOf(plain.pid) - idleBefore[0], cpuOf(server.pid) - idleBefore[1]].map((us) => us / 1000 / IDLE_S);
    const seen = new Map<string, number>();
    const stop = await follow(nc, seen);
    const done: Array<{ key: string; answered: number }> = [];
    let sentSeconds = 0;
    const cpu = { plain: 0, plainCommits: 0, feed: 0, nats: 0 };
    for (let turn = 0; turn < TURNS; turn++) {
      const off = await load(plainCommit, [plain.pid], SECONDS / TURNS);
      cpu.plain += off.cpuUs[0];
      cpu.plainCommits += off.done.length;
      const on = await load(commit, [server.pid, nats.pid!], SECONDS / TURNS);
      done.push(...on.done);
      sentSeconds += on.seconds;
      cpu.feed += on.cpuUs[0];
      cpu.nats += on.cpuUs[1];
    }
    await plain.stop();
    for (let i = 0; i < 200 && done.some((d) => !seen.has(d.key)); i++) await new Promise((r) => setTimeout(r, 50));
    stop();
    const lags = done.filter((d) => seen.has(d.key)).map((d) => seen.get(d.key)! - d.answered);
    lags.sort((a, b) => a - b);
    const missing = done.length - lags.length;
    report(`Change feed: lag from a commit's answer to its event in JetStream (version/create at ${RATE} a second for ${SECONDS} s, ${TABLES} tables)`, [
      {
        commits: done.length,
        'rate achieved (/s)': (done.length / sentSeconds).toFixed(0),
        'lag p50 (ms)': percentile(lags, 50).toFixed(2),
        'lag p99 (ms)': percentile(lags, 99).toFixed(2),
        'lag max (ms)': lags[lags.length - 1].toFixed(2),
        'not seen': missing,
        'server CPU µs/commit, feed off': (cpu.plain / cpu.plainCommits).toFixed(0),
        'server CPU µs/commit, feed on': (cpu.feed / done.length).toFixed(0),
        'nats-server CPU µs/event': (cpu.nats / done.length).toFixed(0),
        'idle server CPU ms/s, feed off': idle[0].toFixed(1),
        'idle server CPU ms/s, feed on': idle[1].toFixed(1),
      },
    ]);

    // A backlog appended while NATS is away, then published as fast as the publisher goes.
    nats.kill('SIGKILL');
    await new Promise((r) => nats.once('exit', r));
    for (let start = 0; start < BACKLOG; start += 500) {
      const operations = Array.from({ length: Math.min(500, BACKLOG - start) }, (_, k) => ({ declare_table: { id: ['c', `b${start + k}`] } }));
      await post(`${server.url}/v1/table/batch-commit`, { operations });
    }
    const head = ((await (await fetch(`${server.url}/v1/history/database?limit=1`)).json()) as { head: number }).head;
    nats = await startNats(natsPort, natsDir);
    const nc2 = await connect({ servers: `nats://127.0.0.1:${natsPort}`, maxReconnectAttempts: -1 });
    const jsm = await nc2.jetstreamManager();
    let first: number | undefined;
    let firstCount = 0;
    const waitStarted = performance.now();
    for (;;) {
      const info = await jsm.streams.info(STREAM);
      const count = info.state.messages;
      if (first === undefined && count > firstCount && firstCount > 0) first = performance.now();
      if (firstCount === 0) firstCount = count;
      if (info.state.last_seq > 0 && count >= head + 1) break;
      if (performance.now() - waitStarted > 300_000) throw new Error('the backlog did not drain in 300 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    const drained = performance.now();
    const published = head + 1 - firstCount;
    const publishSeconds = (drained - (first ?? waitStarted)) / 1000;
    await nc2.close();

    // The log's own read rate over the same events: the embedded store read in the publisher's pages.
    const store = new SqliteEventStore(join(server.dataDir, 'events.sqlite3'));
    const readStarted = performance.now();
    let read = 0;
    for (let from = 0; ; ) {
      const page = await store.readStream('catalog-default', { fromRevision: from, maxCount: 256 });
      read += page.length;
      if (page.length < 256) break;
      from = page[page.length - 1].revision + 1;
    }
    const readSeconds = (performance.now() - readStarted) / 1000;
    await store.close();
    report(`Change feed: the publisher catching up ${published} events against the log's read rate`, [
      { what: 'publisher to JetStream (CloudEvents, acknowledged, checkpointed)', events: published, seconds: publishSeconds.toFixed(2), 'events/s': (published / publishSeconds).toFixed(0) },
      { what: "the log's readStream, pages of 256 (embedded store)", events: read, seconds: readSeconds.toFixed(2), 'events/s': (read / readSeconds).toFixed(0) },
    ]);
  } finally {
    await nc.close().catch(() => undefined);
    await plain.stop();
    await server.stop();
    nats.kill('SIGKILL');
    closeClient();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

import { writeFileSync } from 'node:fs';
import { ARROW_STREAM, arrowStream, sampleTable } from '../arrow-data';
import { Api } from '../http';
import { tempDataDir } from '../server';
import { check, emptyVerdict } from './checker';
import { LoadContext, NS, keyOf, settled, tablePath } from './context';
import { Ledger } from './ledger';
import { raceBatches } from './load-batches';
import { raceVersions } from './load-versions';
import { buildIndexes, insertAndQuery, tagAndBranch } from './load-data';
import { createLancedbTable, lancedbClient } from './load-lancedb';
import { FaultRecord, faultSchedule, runNemesis } from './nemesis';
import { Observer } from './observer';
import { SoakResult, formatReport, summarise } from './report';
import { BUCKET, Cluster, FEED_STREAM, SOAK_KEY } from './topology';
import { FeedVerdict, checkFeed } from './feed-check';

export interface SoakOptions {
  seed: number;
  seconds: number;
  log: (line: string) => void;
  /** Where the nodes' output goes when the run found a problem or a transaction ended Failed. */
  logFile?: string;
}

const RACED = ['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7'];
const BATCHED = ['s0', 's1'];
const DATA = ['d0', 'd1'];
const CLIENTS = ['l0', 'l1'];
/** Where the receiver takes the run's one webhook subscription (every event, from revision 0). */
const FEED_PATH = '/soak';

/** Starts the cluster, drives load and faults for `seconds`, checks, stops; the report's last line is the verdict. */
export async function runSoak(options: SoakOptions): Promise<{ result: SoakResult; report: string }> {
  const { seed, seconds, log } = options;
  const wallStart = Date.now();
  const cluster = new Cluster(tempDataDir('soak-'));
  try {
    await cluster.start();
    log(`soak: cluster up at ${cluster.url} in ${((Date.now() - wallStart) / 1000).toFixed(1)} s`);
    const api = new Api(cluster.url, { 'x-api-key': SOAK_KEY });
    const { keys, secret } = await setUp(api, cluster.url, `${cluster.receiver.url}${FEED_PATH}`);
    const obs = new Observer();
    const ledger = new Ledger();
    const loadEnds = Date.now() + seconds * 1000;
    const faultsSoFar: FaultRecord[] = [];
    const ctx: LoadContext = { url: cluster.url, apiKey: SOAK_KEY, api, obs, ledger, s3: cluster.swift.client(), bucket: BUCKET, running: () => Date.now() < loadEnds, keys, faults: faultsSoFar };

    const schedule = faultSchedule(seed, 3000, Math.max(3000, seconds * 1000 - 5000));
    const progress = setInterval(() => log(`soak: ${((Date.now() - obs.started) / 1000).toFixed(0)} s: ${JSON.stringify(obs.counts)}, acknowledged ${obs.acknowledged}`), 30_000);
    const nemesis = runNemesis(cluster, schedule, obs.started, log, faultsSoFar);
    await Promise.all([
      ...RACED.map((t) => raceVersions(ctx, t)),
      ...BATCHED.map((t) => raceBatches(ctx, t)),
      insertAndQuery(ctx, 'd0', 0),
      insertAndQuery(ctx, 'd0', 1),
      insertAndQuery(ctx, 'd1', 0),
      buildIndexes(ctx, DATA, 4000),
      tagAndBranch(ctx, DATA, 1500),
      ...CLIENTS.map((t) => lancedbClient(ctx, t)),
    ]);
    const faults = await nemesis;
    clearInterval(progress);
    const loadSeconds = (Date.now() - obs.started) / 1000;
    log(`soak: load done after ${loadSeconds.toFixed(0)} s, ${faults.length} faults; checking`);
    const replicas = cluster.apis.map((a) => new Api(a.server.url, { 'x-api-key': SOAK_KEY }));
    const verdict = await check(api, replicas, cluster.swift.client(), BUCKET, ledger, 180_000).catch((e) => ({
      ...emptyVerdict(),
      error: String((e as Error)?.stack ?? e),
    }));
    const feed: FeedVerdict = await checkFeed(api, { url: cluster.nats.url, stream: FEED_STREAM }, cluster.receiver, FEED_PATH, secret, 120_000).catch((e) => ({
      revisions: 0,
      nats: 0,
      webhook: 0,
      webhookRepeats: 0,
      problems: [`change feed: the check did not finish: ${String(e)}`],
    }));
    const result = summarise(seed, Math.round(loadSeconds), (Date.now() - wallStart) / 1000, obs, faults, verdict, cluster.crashes, feed);
    if ((result.problems.length || verdict.failed.length) && options.logFile) {
      const nodes = [...cluster.apis, ...cluster.workers].map((n) => `==== ${n.name}\n${n.server.output()}`);
      writeFileSync(options.logFile, [...cluster.pastOutput, ...nodes].join('\n\n'));
      log(`soak: the nodes' output is in ${options.logFile}`);
    }
    return { result, report: formatReport(result, obs) };
  } finally {
    await cluster.stop();
  }
}

/** The tables the load works on, made before any fault (their key prefixes in the bucket), and the webhook subscription's secret. */
async function setUp(api: Api, url: string, webhookUrl: string): Promise<{ keys: Map<string, string>; secret: string }> {
  const ok = (what: string, send: () => Promise<{ status: number; body: any }>) =>
    settled(what, async () => {
      const r = await send();
      if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    });
  const { secret } = await ok('webhook subscription', () => api.post('/v1/subscriptions/create', { url: webhookUrl, from_revision: 0 }));
  await ok('namespace', () => api.post(`/v1/namespace/${NS}/create`, {}));
  for (const t of [...RACED, ...BATCHED]) await ok(`declare ${t}`, () => api.post(`${tablePath(t)}/declare`, {}));
  for (const t of DATA) await ok(`create ${t}`, () => api.send('POST', `${tablePath(t)}/create`, arrowStream(sampleTable(0, 50)), ARROW_STREAM));
  for (const t of CLIENTS) await createLancedbTable(url, SOAK_KEY, t);
  const keys = new Map<string, string>();
  for (const t of [...RACED, ...BATCHED, ...DATA, ...CLIENTS]) keys.set(t, keyOf((await ok(`describe ${t}`, () => api.post(`${tablePath(t)}/describe`, {}))).location, BUCKET));
  return { keys, secret };
}



import { versionsDir } from '@app/catalog';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { closeClient, cpuOf, post, report, send, stagingManifestName, startBareServer, startFloorCatalog, startServer, timedWithCpu } from './support';

/**
 * The commit path alone: `version/create` one at a time over one keep-alive connection, as the
 * lancedb client commits, each after writing its 4 KB staging manifest. Measured is the CPU each
 * server spends per commit (utime and stime from /proc): this server; the minimal catalog of the
 * design (bench/floor-catalog.ts: a hard link and an fdatasync'd line holding the version's record
 * and the manifest's bytes), the baseline; the same with the record alone, whose manifests a crash
 * can lose; and a bare Fastify route answering the same request with a fixed object, taking turns
 * of TURN commits.
 *
 * Twice: back to back, and spaced as the lancedb client's commits come, GAP ms apart (the time a
 * 2,000-row append takes Lance here), with everything the server does in the pauses charged too.
 * Between two calls the server's core runs other work (Lance in the client bench, other tenants of
 * the host here), so each request starts with cold caches; what a commit then costs grows with
 * how much code and data it touches. The spaced rows reproduce the client bench's CPU per call
 * without Lance in the way. The absolute figures move with the machine from run to run; compare
 * the ratios, whose targets took turns in the same minutes.
 *
 * First, after the warm-up, every server stands by for IDLE_S seconds with no request: the CPU a
 * server spends doing nothing (its timers) is charged to every spaced commit too.
 */
const TURNS = Number(process.env.BENCH_COMMIT_TURNS ?? 8);
const TURN = Number(process.env.BENCH_COMMIT_TURN ?? 500);
/** Untimed commits first: V8 optimises a function with TurboFan after about 3,000 calls (Node 22), and the commit path's run once per commit. */
const WARM = Number(process.env.BENCH_COMMIT_WARM ?? 6000);
const GAP = Number(process.env.BENCH_COMMIT_GAP_MS ?? 5);
/** Spaced commits per turn: a turn of them takes about as long as a turn back to back. */
const SPACED_TURN = Number(process.env.BENCH_COMMIT_SPACED_TURN ?? 100);
/** Seconds every server stands by with no request, after the warm-up: what each costs doing nothing. */
const IDLE_S = Number(process.env.BENCH_COMMIT_IDLE_S ?? 20);
const TABLES = 20;
const MANIFEST = 'x'.repeat(4096);

interface Target {
  path: string;
  pid: number;
  /** The request of the i-th commit: the URL and the body. */
  commit: (i: number) => { url: string; body: unknown };
  /** How many commits it has been sent, measured or not: the next one is the next version. */
  sent: number;
  /** Measured back to back, and spaced GAP ms apart. */
  tight: Tally;
  spaced: Tally;
}

interface Tally {
  commits: number;
  ms: number;
  userUs: number;
  systemUs: number;
}

const tally = (): Tally => ({ commits: 0, ms: 0, userUs: 0, systemUs: 0 });

/** Declares TABLES tables in namespace `c`; the i-th commit writes a staging manifest and commits it as the next version of table i % TABLES. */
async function catalogTarget(path: string, url: string, pid: number): Promise<Target> {
  await post(`${url}/v1/namespace/c/create`, {});
  const locations: string[] = [];
  for (let t = 0; t < TABLES; t++) locations.push((await post(`${url}/v1/table/c%24t${t}/declare`, {})).location);
  for (const location of locations) mkdirSync(versionsDir(location), { recursive: true });
  const commit = (i: number) => {
    const t = i % TABLES;
    const version = Math.floor(i / TABLES) + 1;
    const staging = join(versionsDir(locations[t]), stagingManifestName(version));
    writeFileSync(staging, MANIFEST);
    return { url: `${url}/v1/table/c%24t${t}/version/create`, body: { version, manifest_path: staging.slice(1) } };
  };
  return { path, pid, commit, sent: 0, tight: tally(), spaced: tally() };
}

/** The same request to a route that answers a fixed object (the staging manifest written all the same). */
function bareTarget(url: string, pid: number, scratch: string): Target {
  const commit = (i: number) => {
    const staging = join(scratch, stagingManifestName(i + 1));
    writeFileSync(staging, MANIFEST);
    return { url: `${url}/v1/table/c%24t${i % TABLES}/describe`, body: { version: Math.floor(i / TABLES) + 1, manifest_path: staging.slice(1) } };
  };
  return { path: 'bare Fastify route answering a fixed object', pid, commit, sent: 0, tight: tally(), spaced: tally() };
}

async function commit(target: Target, count: number, gapMs = 0): Promise<void> {
  for (let n = 0; n < count; n++) {
    const { url, body } = target.commit(target.sent++);
    if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
    const res = await send(url, 'application/json', Buffer.from(JSON.stringify(body)));
    if (res.status !== 200) throw new Error(`${target.path}: ${res.status} ${res.body.toString()}`);
  }
}

async function main(): Promise<void> {
  const server = await startServer();
  const floor = await startFloorCatalog('journaled');
  const recordOnly = await startFloorCatalog('record-only');
  const bare = await startBareServer();
  try {
    const scratch = join(server.dataDir, 'bare-staging');
    mkdirSync(scratch);
    const targets = [
      bareTarget(bare.url, bare.pid, scratch),
      await catalogTarget('minimal catalog of this design, bench/floor-catalog.ts, manifest journaled (baseline)', floor.url, floor.pid),
      await catalogTarget('the same, version record only (manifest not durable)', recordOnly.url, recordOnly.pid),
      await catalogTarget('this catalog, CreateTableVersion', server.url, server.pid),
    ];
    for (const target of targets) await commit(target, WARM);
    // All at once, over the same seconds: CPU ticks are 10 ms, so the figures are to 10 / IDLE_S ms a second.
    const idleBefore = targets.map((t) => cpuOf(t.pid));
    await new Promise((r) => setTimeout(r, IDLE_S * 1000));
    const idle = targets.map((t, i) => (cpuOf(t.pid) - idleBefore[i]) / 1000 / IDLE_S);
    // Turns in alternating order, so that a slow spell of the machine falls on every target alike.
    const measure = async (target: Target, into: Tally, count: number, gapMs: number) => {
      const { ms, user, system } = await timedWithCpu(target.pid, () => commit(target, count, gapMs));
      into.commits += count;
      into.ms += ms;
      into.userUs += user;
      into.systemUs += system;
    };
    for (let turn = 0; turn < TURNS; turn++) {
      for (const target of turn % 2 ? [...targets].reverse() : targets) {
        await measure(target, target.tight, TURN, 0);
        await measure(target, target.spaced, SPACED_TURN, GAP);
      }
    }
    const rows = (of: (t: Target) => Tally) => {
      const cpuPerCommit = (t: Tally) => (t.userUs + t.systemUs) / t.commits;
      const baseline = cpuPerCommit(of(targets[1]));
      return targets.map((target) => {
        const t = of(target);
        return {
          path: target.path,
          'server CPU µs/commit': cpuPerCommit(t).toFixed(0),
          'user µs': (t.userUs / t.commits).toFixed(0),
          'kernel µs': (t.systemUs / t.commits).toFixed(0),
          'wall µs/commit': ((t.ms * 1000) / t.commits).toFixed(0),
          'CPU ratio': (cpuPerCommit(t) / baseline).toFixed(2),
        };
      });
    };
    report(`Commit path: version/create one at a time, ${TURNS * TURN} commits after ${WARM} untimed`, rows((t) => t.tight));
    report(
      `Commit path, spaced: ${TURNS * SPACED_TURN} commits ${GAP} ms apart, the pauses included in CPU and wall`,
      rows((t) => t.spaced),
    );
    report(
      `Standing by: CPU over ${IDLE_S} s with no request, after the warm-up`,
      targets.map((t, i) => ({ path: t.path, 'CPU ms/s': idle[i].toFixed(1) })),
    );
  } finally {
    bare.stop();
    floor.stop();
    recordOnly.stop();
    await server.stop();
    closeClient();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { closeClient, post, report, send, stagingManifestName, startBareServer, startFloorCatalog, startServer, timedWithCpu } from './support';

/**
 * The commit path alone: `version/create` one at a time over one keep-alive connection, as the
 * lancedb client commits, each after writing its 4 KB staging manifest. Measured is the CPU each
 * server spends per commit (utime and stime from /proc): this server, the minimal catalog of the
 * design (bench/floor-catalog.ts: a hard link and an fdatasync'd line) and a bare Fastify route
 * answering the same request with a fixed object, taking turns of TURN commits.
 *
 * The client bench measures what a user sees, but between two calls Lance works on the same two
 * cores: every server's CPU per call comes out about 2.5 times larger there, and one run's noise is
 * about 10 %. Here nothing else runs between the calls, so a change to the commit path shows
 * within a few percent.
 */
const TURNS = Number(process.env.BENCH_COMMIT_TURNS ?? 8);
const TURN = Number(process.env.BENCH_COMMIT_TURN ?? 500);
const WARM = Number(process.env.BENCH_COMMIT_WARM ?? 3000);
const TABLES = 20;
const MANIFEST = 'x'.repeat(4096);

interface Target {
  path: string;
  pid: number;
  /** The request of the i-th commit: the URL and the body. */
  commit: (i: number) => { url: string; body: unknown };
  commits: number;
  ms: number;
  userUs: number;
  systemUs: number;
}

/** Declares TABLES tables in namespace `c`; the i-th commit writes a staging manifest and commits it as the next version of table i % TABLES. */
async function catalogTarget(path: string, url: string, pid: number): Promise<Target> {
  await post(`${url}/v1/namespace/c/create`, {});
  const locations: string[] = [];
  for (let t = 0; t < TABLES; t++) locations.push((await post(`${url}/v1/table/c%24t${t}/declare`, {})).location);
  for (const location of locations) mkdirSync(join(location, '_versions'), { recursive: true });
  const commit = (i: number) => {
    const t = i % TABLES;
    const version = Math.floor(i / TABLES) + 1;
    const staging = join(locations[t], '_versions', stagingManifestName(version));
    writeFileSync(staging, MANIFEST);
    return { url: `${url}/v1/table/c%24t${t}/version/create`, body: { version, manifest_path: staging.slice(1) } };
  };
  return { path, pid, commit, commits: 0, ms: 0, userUs: 0, systemUs: 0 };
}

/** The same request to a route that answers a fixed object (the staging manifest written all the same). */
function bareTarget(url: string, pid: number, scratch: string): Target {
  const commit = (i: number) => {
    const staging = join(scratch, stagingManifestName(i + 1));
    writeFileSync(staging, MANIFEST);
    return { url: `${url}/v1/table/c%24t${i % TABLES}/describe`, body: { version: Math.floor(i / TABLES) + 1, manifest_path: staging.slice(1) } };
  };
  return { path: 'bare Fastify route answering a fixed object', pid, commit, commits: 0, ms: 0, userUs: 0, systemUs: 0 };
}

async function commit(target: Target, count: number): Promise<void> {
  for (let n = 0; n < count; n++) {
    const { url, body } = target.commit(target.commits++);
    const res = await send(url, 'application/json', Buffer.from(JSON.stringify(body)));
    if (res.status !== 200) throw new Error(`${target.path}: ${res.status} ${res.body.toString()}`);
  }
}

async function main(): Promise<void> {
  const server = await startServer();
  const floor = await startFloorCatalog();
  const bare = await startBareServer();
  try {
    const scratch = join(server.dataDir, 'bare-staging');
    mkdirSync(scratch);
    const targets = [
      bareTarget(bare.url, bare.pid, scratch),
      await catalogTarget('minimal catalog of this design, bench/floor-catalog.ts (baseline)', floor.url, floor.pid),
      await catalogTarget('this catalog, CreateTableVersion', server.url, server.pid),
    ];
    for (const target of targets) await commit(target, WARM);
    // Turns in alternating order, so that a slow spell of the machine falls on every target alike.
    for (let turn = 0; turn < TURNS; turn++) {
      for (const target of turn % 2 ? [...targets].reverse() : targets) {
        const { ms, user, system } = await timedWithCpu(target.pid, () => commit(target, TURN));
        target.ms += ms;
        target.userUs += user;
        target.systemUs += system;
      }
    }
    const commits = TURNS * TURN;
    const cpuOf = (t: Target) => (t.userUs + t.systemUs) / commits;
    const baseline = cpuOf(targets[1]);
    report(`Commit path: version/create one at a time, ${commits} commits after ${WARM} untimed`, targets.map((t) => ({
      path: t.path,
      'server CPU µs/commit': cpuOf(t).toFixed(0),
      'user µs': (t.userUs / commits).toFixed(0),
      'kernel µs': (t.systemUs / commits).toFixed(0),
      'wall µs/commit': ((t.ms * 1000) / commits).toFixed(0),
      'CPU ratio': (cpuOf(t) / baseline).toFixed(2),
    })));
  } finally {
    bare.stop();
    floor.stop();
    await server.stop();
    closeClient();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

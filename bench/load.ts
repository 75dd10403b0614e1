import { versionsDir, versionsDirOf } from '@app/catalog';
import autocannon from 'autocannon';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpuOf, post, stagingManifestName } from './support';

/** Load from autocannon against catalog routes, shared by the catalog and replica benchmarks. */
export interface Load {
  rps: number;
  p50: number;
  p99: number;
  /** CPU the serving processes spent per answered request (user + system), in µs. */
  cpuUs: number;
}

export interface Route {
  method: 'GET' | 'POST';
  path: (i: number) => string;
  /** Sent with every request (a credential). */
  headers?: Record<string, string>;
}

/** One autocannon run: what it answered, in how long, and the serving processes' CPU meanwhile. */
export interface Run {
  requests: number;
  seconds: number;
  p50: number;
  p99: number;
  cpuUs: number;
}

const cpuOfAll = (pids: number[]) => pids.reduce((sum, pid) => sum + cpuOf(pid), 0);

export async function run(url: string, pids: number[], connections: number, title: string, request: Route, seconds: number): Promise<Run> {
  let i = 0;
  const cpuBefore = cpuOfAll(pids);
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    requests: [
      {
        method: request.method,
        headers: { 'content-type': 'application/json', ...request.headers },
        body: request.method === 'POST' ? '{}' : undefined,
        setupRequest: (req) => ({ ...req, path: request.path(i++) }),
      },
    ],
  });
  if (result.non2xx || result.errors) throw new Error(`${title}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { requests: result.requests.total, seconds: result.duration, p50: result.latency.p50, p99: result.latency.p99, cpuUs: cpuOfAll(pids) - cpuBefore };
}

/** Runs pooled: every request of every round over their whole time; the worst round's latencies. */
export function pooled(runs: Run[]): Load {
  const requests = runs.reduce((n, r) => n + r.requests, 0);
  return {
    rps: requests / runs.reduce((t, r) => t + r.seconds, 0),
    p50: Math.max(...runs.map((r) => r.p50)),
    p99: Math.max(...runs.map((r) => r.p99)),
    cpuUs: runs.reduce((c, r) => c + r.cpuUs, 0) / requests,
  };
}

/** Declares 100 tables in namespace `ns` and stages `perTable` manifests in each; returns their locations. */
export async function stagedTables(url: string, ns: string, perTable: number): Promise<string[]> {
  await post(`${url}/v1/namespace/${ns}/create`, {});
  const locations: string[] = [];
  for (let t = 0; t < 100; t++) locations.push((await post(`${url}/v1/table/${ns}%24t${t}/declare`, {})).location);
  for (const [t, location] of locations.entries()) {
    mkdirSync(versionsDir(location), { recursive: true });
    for (let v = 1; v <= perTable; v++) writeFileSync(join(versionsDir(location), stagingManifestName(v)), `table ${t} version ${v} `.padEnd(600, '.'));
  }
  return locations;
}

/** `connections` autocannon connections commit every staged version once: request i commits version floor(i / 100) + 1 of table i % 100. */
export async function commitAll(url: string, connections: number, ns: string, locations: string[], perTable: number) {
  let next = 0;
  // autocannon notices that `amount` is reached only on its once-a-second tick, so the time is
  // taken at the last answer rather than when autocannon returns.
  let last = 0n;
  const started = process.hrtime.bigint();
  const result = await autocannon({
    url,
    connections,
    amount: perTable * 100,
    requests: [
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        setupRequest: (req) => {
          const i = next++;
          const t = i % 100;
          const v = Math.floor(i / 100) + 1;
          return { ...req, path: `/v1/table/${ns}%24t${t}/version/create`, body: JSON.stringify({ version: v, manifest_path: versionsDirOf(locations[t]) + stagingManifestName(v) }) };
        },
        onResponse: () => {
          last = process.hrtime.bigint();
        },
      },
    ],
  });
  const ms = Number(last - started) / 1e6;
  if (result.non2xx || result.errors) throw new Error(`commits: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { ms, committed: result.requests.total, p99: result.latency.p99 };
}

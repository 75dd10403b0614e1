import { createHash } from 'node:crypto';
import { startRgw } from '../test/support/rgw';
import { report, startServer } from './support';

/**
 * DescribeTable with CLIENT_CREDENTIALS=sts against a real STS (Ceph's RADOS Gateway, started as
 * the tests start it): the first describe of a table at a level assumes a role (an STS round trip),
 * later ones answer the session kept for that table and level. Each request waits for the one
 * before it, as the lancedb client does. Baseline: the same describe with `vend_credentials:
 * false`, which touches no STS.
 */
const TABLES = Number(process.env.BENCH_STS_TABLES ?? 300);
const ROUNDS = Number(process.env.BENCH_STS_ROUNDS ?? 5);
const ADMIN = 'bench-admin-key-0123456789';
const READER = 'bench-reader-key-0123456789';
const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');

async function describeTimes(url: string, key: string, tables: number, body: unknown): Promise<number[]> {
  const times: number[] = [];
  for (let t = 0; t < tables; t++) {
    const started = process.hrtime.bigint();
    const res = await fetch(`${url}/v1/table/bench%24t${t}/describe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify(body),
    });
    const answer = (await res.json()) as { storage_options?: Record<string, string> };
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (res.status !== 200) throw new Error(`describe t${t}: ${res.status} ${JSON.stringify(answer)}`);
  }
  return times;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))];

async function main(): Promise<void> {
  const rgw = await startRgw();
  await rgw.createBucket('bench');
  const server = await startServer({
    ...rgw.awsEnv(),
    WAREHOUSE: 's3://bench/catalog',
    CLIENT_CREDENTIALS: 'sts',
    STS_ROLE_ARN: rgw.roleArn,
    VENDED_CREDENTIALS_SECONDS: '3600',
    ACCESS_LOG: 'off',
    AUTH_API_KEYS: JSON.stringify([
      { principal: 'admin', sha256: sha256(ADMIN), databases: ['*'], level: 'admin' },
      { principal: 'reader', sha256: sha256(READER), databases: ['*'], level: 'read' },
    ]),
  });
  try {
    const admin = { 'content-type': 'application/json', 'x-api-key': ADMIN };
    await fetch(`${server.url}/v1/namespace/bench/create`, { method: 'POST', headers: admin, body: '{}' });
    // Declaring vends the admin's read-write sessions; the reader's read-only ones are not minted yet.
    for (let t = 0; t < TABLES; t++) await fetch(`${server.url}/v1/table/bench%24t${t}/declare`, { method: 'POST', headers: admin, body: '{}' });
    await describeTimes(server.url, ADMIN, Math.min(TABLES, 50), { vend_credentials: false });

    const minted = await describeTimes(server.url, READER, TABLES, {});
    const kept: number[] = [];
    const bare: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      kept.push(...(await describeTimes(server.url, READER, TABLES, {})));
      bare.push(...(await describeTimes(server.url, READER, TABLES, { vend_credentials: false })));
    }
    const row = (path: string, xs: number[]) => ({
      path,
      requests: xs.length,
      'median ms': median(xs).toFixed(2),
      'p99 ms': p99(xs).toFixed(2),
      'ratio to baseline (median)': (median(xs) / median(bare)).toFixed(2),
    });
    report(`DescribeTable with STS credentials (RGW), ${TABLES} tables, one request at a time`, [
      row('vend_credentials false, no STS (baseline)', bare),
      row('a session kept for the table and level (cache hit)', kept),
      row('first describe of the table at this level: AssumeRole (no session kept)', minted),
    ]);
  } finally {
    await server.stop();
    await rgw.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

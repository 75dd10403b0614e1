import { GetObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { Api } from '../http';
import { NS, settled, sleep, tablePath } from './context';
import { Ledger } from './ledger';

export interface Verdict {
  /** Acknowledged writes the end state does not hold as acknowledged. */
  lost: string[];
  /** Versions with more than one acknowledged winner. */
  doubleWinners: string[];
  /** Batches whose parts are not all there or all absent. */
  partialBatches: string[];
  /** Transactions not terminal by the end of the wait. */
  stuck: string[];
  transactionStatuses: Record<string, number>;
  /** Transactions that ended Failed, with the reason they record: allowed, and worth reading. */
  failed: string[];
  /** The replicas' digests, when they differ. */
  digestMismatch?: string;
  /** Tables whose row count is below what was acknowledged or above what was tried. */
  badCounts: string[];
  checked: number;
  /** The check itself could not finish (the cluster did not come back). */
  error?: string;
}

const TERMINAL = ['Succeeded', 'Failed', 'Canceled'];

/** A verdict with nothing found yet. */
export function emptyVerdict(): Verdict {
  return { lost: [], doubleWinners: [], partialBatches: [], stuck: [], transactionStatuses: {}, failed: [], badCounts: [], checked: 0 };
}

/** Every page of a listing through the balancer, retried until it answers. */
async function listAll(api: Api, path: string, field: string, method: 'GET' | 'POST' = 'POST'): Promise<any[]> {
  const items: any[] = [];
  let token: string | undefined;
  do {
    const page = await settled(`${path}`, async () => {
      const url = `${path}?limit=1000${token ? `&page_token=${encodeURIComponent(token)}` : ''}`;
      const r = method === 'GET' ? await api.get(url) : await api.post(url, {});
      if (r.status !== 200) throw new Error(`${r.status} ${r.text.slice(0, 300)}`);
      return r.body;
    });
    const got = page[field];
    items.push(...(Array.isArray(got) ? got : Object.entries(got ?? {}).map(([name, value]) => ({ name, ...(value as object) }))));
    token = page.page_token ?? undefined;
  } while (token);
  return items;
}

/**
 * Proves what the load was told, against the cluster once every fault has ended: each acknowledged
 * commit listed with its manifest in the bucket holding the acknowledged bytes, one winner per
 * version, every batch whole or absent, every transaction terminal, equal digests on the replicas.
 */
export async function check(api: Api, replicas: Api[], s3: import('@aws-sdk/client-s3').S3Client, bucket: string, ledger: Ledger, transactionWaitMs: number): Promise<Verdict> {
  const v = emptyVerdict();
  const object = (key: string) =>
    settled(`get ${key}`, async () => {
      try {
        const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return Buffer.from(await got.Body!.transformToByteArray());
      } catch (e) {
        if ((e as { name?: string }).name === 'NoSuchKey') return null;
        throw e;
      }
    });
  const exists = (key: string) =>
    settled(`head ${key}`, async () => {
      try {
        await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return true;
      } catch (e) {
        if ((e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
        throw e;
      }
    });
  const keyOfPath = (path: string) => (path.startsWith('s3://') ? path.slice(`s3://${bucket}/`.length) : path.replace(/^\//, ''));

  const listedByTable = new Map<string, Map<number, string>>();
  const listed = async (table: string) => {
    if (!listedByTable.has(table)) {
      const versions = await listAll(api, `${tablePath(table)}/version/list`, 'versions');
      listedByTable.set(table, new Map(versions.map((x) => [x.version, keyOfPath(x.manifest_path)])));
    }
    return listedByTable.get(table)!;
  };

  for (const [round, n] of ledger.winners) if (n > 1) v.doubleWinners.push(`${round}: ${n} acknowledged winners`);

  for (const c of ledger.commits) {
    v.checked++;
    const path = (await listed(c.table)).get(c.version);
    if (!path) v.lost.push(`${c.table} v${c.version}: acknowledged, not listed`);
    else {
      const stored = await object(path);
      if (!stored) v.lost.push(`${c.table} v${c.version}: listed, its manifest ${path} is not in the bucket`);
      else if (!stored.equals(c.bytes)) v.lost.push(`${c.table} v${c.version}: the manifest holds other bytes than the acknowledged commit's`);
    }
  }

  for (const w of ledger.versions) {
    v.checked++;
    const path = (await listed(w.table)).get(w.version);
    if (!path) v.lost.push(`${w.table} v${w.version}: acknowledged write, version not listed`);
    else if (!(await exists(path))) v.lost.push(`${w.table} v${w.version}: listed, its manifest ${path} is not in the bucket`);
  }
  const ackedRows = new Map<string, number>();
  for (const w of ledger.versions) ackedRows.set(w.table, (ackedRows.get(w.table) ?? 0) + w.rows);
  for (const [table, acked] of ackedRows) {
    const counted = await settled(`count ${table}`, async () => {
      const r = await api.post(`${tablePath(table)}/count_rows`, {});
      return r.status === 200 ? Number(r.body) : undefined;
    });
    // Set-up rows (a create's first rows) are not in the ledger; writes that failed may have applied.
    const most = (ledger.attemptedRows.get(table) ?? 0) + 1000;
    if (counted < acked || counted > most) v.badCounts.push(`${table}: ${counted} rows, ${acked} acknowledged, at most ${most} tried`);
  }

  const tables = new Set((await listAll(api, `/v1/namespace/${NS}/table/list`, 'tables', 'GET')).map((t) => (typeof t === 'string' ? t : t.name)));
  for (const b of ledger.batches) {
    v.checked++;
    const path = (await listed(b.table)).get(b.version);
    const applied = path !== undefined && (await object(path))?.equals(b.bytes) === true;
    const declared = tables.has(b.declared);
    if (applied !== declared) v.partialBatches.push(`batch ${b.declared}: version ${b.table} v${b.version} ${applied ? 'applied' : 'not applied'}, table ${declared ? 'declared' : 'not declared'}`);
    if (b.acknowledged && !applied) v.lost.push(`batch ${b.declared}: acknowledged, not applied`);
  }

  const tagsByTable = new Map<string, Map<string, number>>();
  for (const t of ledger.tags) {
    v.checked++;
    if (!tagsByTable.has(t.table)) tagsByTable.set(t.table, new Map((await listAll(api, `${tablePath(t.table)}/tags/list`, 'tags')).map((x) => [x.name, x.version])));
    const at = tagsByTable.get(t.table)!.get(t.tag);
    if (at !== t.version) v.lost.push(`tag ${t.tag} on ${t.table}: acknowledged at v${t.version}, ${at === undefined ? 'not listed' : `listed at v${at}`}`);
  }
  const branchesByTable = new Map<string, Set<string>>();
  for (const b of ledger.branches) {
    v.checked++;
    if (!branchesByTable.has(b.table)) branchesByTable.set(b.table, new Set((await listAll(api, `${tablePath(b.table)}/branches/list`, 'branches')).map((x) => x.name)));
    if (!branchesByTable.get(b.table)!.has(b.branch)) v.lost.push(`branch ${b.branch} of ${b.table}: acknowledged, not listed`);
  }

  // Queued work may still be waiting out a backoff from the last outage: it must end all the same.
  const deadline = Date.now() + transactionWaitMs;
  for (const t of ledger.transactions) {
    v.checked++;
    let described: { status: string; properties?: Record<string, string> };
    for (;;) {
      described = await settled(`transaction ${t.id}`, async () => {
        const r = await api.post(`/v1/transaction/${t.id}/describe`, {});
        return r.status === 200 ? { status: String(r.body.status), properties: r.body.properties } : undefined;
      });
      if (TERMINAL.includes(described.status) || Date.now() > deadline) break;
      await sleep(500);
    }
    const { status } = described;
    v.transactionStatuses[status] = (v.transactionStatuses[status] ?? 0) + 1;
    if (status === 'Failed') v.failed.push(`transaction ${t.id} (${t.what}): ${described.properties?.reason ?? 'no reason recorded'}`);
    if (!TERMINAL.includes(status)) v.stuck.push(`transaction ${t.id} (${t.what}) still ${status}`);
  }

  // Digests compare at one revision: workers may still be recording, so read again until both
  // replicas stand at the same one.
  for (let attempt = 0; ; attempt++) {
    const digests = await Promise.all(
      replicas.map((r) =>
        settled('digest', async () => {
          const d = await r.get('/v1/history/digest');
          return d.status === 200 ? (d.body as { revision: number; digest: string }) : undefined;
        }),
      ),
    );
    const sameRevision = digests.every((d) => d.revision === digests[0].revision);
    if (sameRevision && digests.every((d) => d.digest === digests[0].digest)) break;
    if (sameRevision || attempt >= 120) {
      v.digestMismatch = digests.map((d, i) => `replica ${i}: revision ${d.revision} digest ${d.digest}`).join('; ');
      break;
    }
    await sleep(500);
  }
  return v;
}

import { PutObjectCommand } from '@aws-sdk/client-s3';
import { randomBytes, randomUUID } from 'node:crypto';
import { LoadContext, call, finalName, sleep, tablePath } from './context';

const CONFLICT = [{ status: 409, code: 14 }];

/**
 * Writers of a shared table, as clients of managed versioning: each stages its own manifest in the
 * bucket and calls version/create through the balancer. Every other version two of them race for
 * it; the one between has one writer, as most commits of a table do. The loser's 409 code 14 is the
 * protocol's refusal; a 200 is an acknowledged commit of those bytes.
 */
export async function raceVersions(ctx: LoadContext, table: string): Promise<void> {
  const key = ctx.keys.get(table)!;
  const driver = `versions:${table}`;
  let version = 1;
  while (ctx.running()) {
    const writers = version % 2 === 0 ? 2 : 1;
    const contents = [randomBytes(200 + (version % 200)), randomBytes(300)].slice(0, writers);
    const stagings = contents.map(() => `${key}/_versions/${finalName(version)}-${randomUUID()}`);
    try {
      await Promise.all(stagings.map((Key, i) => ctx.s3.send(new PutObjectCommand({ Bucket: ctx.bucket, Key, Body: contents[i] }))));
    } catch {
      // The bucket is down (a fault): a client cannot stage anything, so it waits.
      await sleep(300);
      continue;
    }
    const answers = await Promise.all(
      stagings.map((manifest_path, i) =>
        call(ctx, `${driver}:${i}`, 'version/create', `${tablePath(table)}/version/create`, { version, manifest_path, naming_scheme: 'V2' }, CONFLICT),
      ),
    );
    const won = answers.flatMap((a, i) => (a.outcome === 'success' ? [i] : []));
    for (const i of won) {
      ctx.ledger.won(table, version);
      ctx.ledger.commits.push({ table, key, version, bytes: contents[i] });
      ctx.obs.ack();
    }
    if (won.length) {
      version++;
      continue;
    }
    // No acknowledged winner: a fault took the answer, or a copy a killed replica left unrecorded
    // holds the version for a moment. What the catalog lists says which version is next.
    // The first writer's client asks: one client, so its time without a success spans its listing too.
    const listed = await call(ctx, `${driver}:0`, 'version/list', `${tablePath(table)}/version/list?descending=true&limit=1`, {});
    const latest = listed.reply?.status === 200 ? Math.max(0, ...(listed.reply.body.versions ?? []).map((v: { version: number }) => v.version)) : undefined;
    if (latest !== undefined) version = latest + 1;
    await sleep(100);
  }
}

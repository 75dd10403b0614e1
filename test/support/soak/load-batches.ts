import { PutObjectCommand } from '@aws-sdk/client-s3';
import { randomBytes, randomUUID } from 'node:crypto';
import { LoadContext, NS, call, finalName, sleep, tablePath } from './context';

const CONFLICT = [{ status: 409, code: 14 }];
const SIDES = ['x', 'y', 'z'];

/**
 * Three BatchCommitTables race, each declaring a table of its own and committing the same version
 * of a shared table with its own manifest: at most one wins, and each applies whole or not at all
 * (its table exists exactly when the version holds its manifest), whatever its answer was.
 */
export async function raceBatches(ctx: LoadContext, shared: string): Promise<void> {
  const key = ctx.keys.get(shared)!;
  const driver = `batches:${shared}`;
  let version = 1;
  for (let round = 0; ctx.running(); round++) {
    const attempts = SIDES.map((side) => ({
      declared: `${shared}_${round}_${side}`,
      bytes: randomBytes(256),
      staged: `${key}/_versions/${finalName(version)}-${randomUUID()}`,
    }));
    try {
      await Promise.all(attempts.map((a) => ctx.s3.send(new PutObjectCommand({ Bucket: ctx.bucket, Key: a.staged, Body: a.bytes }))));
    } catch {
      await sleep(300);
      continue;
    }
    const answers = await Promise.all(
      attempts.map((a, i) =>
        call(
          ctx,
          `${driver}:${i}`,
          'batch-commit',
          '/v1/table/batch-commit',
          {
            operations: [
              { declare_table: { id: [NS, a.declared] } },
              { create_table_version: { id: [NS, shared], version, manifest_path: a.staged, naming_scheme: 'V2' } },
            ],
          },
          CONFLICT,
        ),
      ),
    );
    answers.forEach((answer, i) => {
      const acknowledged = answer.outcome === 'success';
      ctx.ledger.batches.push({ declared: attempts[i].declared, table: shared, key, version, bytes: attempts[i].bytes, acknowledged });
      if (acknowledged) {
        ctx.ledger.won(shared, version);
        ctx.obs.ack();
      }
    });
    if (answers.some((a) => a.outcome === 'success')) {
      version++;
      continue;
    }
    // The first writer's client asks: one client, so its time without a success spans its listing too.
    const listed = await call(ctx, `${driver}:0`, 'version/list', `${tablePath(shared)}/version/list?descending=true&limit=1`, {});
    const latest = listed.reply?.status === 200 ? Math.max(0, ...(listed.reply.body.versions ?? []).map((v: { version: number }) => v.version)) : undefined;
    if (latest !== undefined) version = latest + 1;
    await sleep(100);
  }
}

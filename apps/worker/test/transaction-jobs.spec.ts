import { randomUUID } from 'node:crypto';
import { Job, Queue } from 'bullmq';
import { CatalogError, ErrorCode, TransactionStatus } from '@app/catalog';
import { redisConnection } from '@app/jobs';
import { TransactionJob, runTransactionJob } from '../src/transaction-jobs';

/**
 * A transaction's job whose outcome could not be recorded (the event store away) goes back to wait
 * and is taken again, by this worker or another, as the job Redis holds: its work is not done again.
 */
describe("a transaction's job taken again after its work was done", () => {
  let queue: Queue;

  beforeAll(() => {
    queue = new Queue(`transaction-jobs-${randomUUID()}`, { connection: redisConnection(process.env.REDIS_URL!) });
  });

  afterAll(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
  });

  /** A transaction the steps keep in memory, as the catalog would: its statuses, and how often the work ran. */
  function transaction(opts: { unavailableOnce?: TransactionStatus } = {}) {
    const statuses: Array<{ status: TransactionStatus; properties: Record<string, string> }> = [];
    let status: TransactionStatus = 'Queued';
    let unavailable = opts.unavailableOnce;
    let workRuns = 0;
    const steps: TransactionJob = {
      status: async () => status,
      setStatus: async (next, properties) => {
        if (next === unavailable) {
          unavailable = undefined;
          throw new CatalogError(ErrorCode.ServiceUnavailable, 'the event store is unavailable; retry later');
        }
        status = next;
        statuses.push({ status: next, properties });
      },
      work: async () => {
        workRuns++;
        return { fragments_before: '27', fragments_after: '1' };
      },
    };
    return { steps, statuses, workRuns: () => workRuns };
  }

  const taken = async (id: string) => (await Job.fromId(queue, id))!;

  it('records the outcome of the first run and does not run the work again', async () => {
    const job = await queue.add('compact', { database: 'default', transactionId: randomUUID() });
    const tx = transaction({ unavailableOnce: 'Succeeded' });
    const first = await runTransactionJob(await taken(job.id!), tx.steps).catch((e: Error) => e);
    expect((first as CatalogError).code).toBe(ErrorCode.ServiceUnavailable);
    expect(await runTransactionJob(await taken(job.id!), tx.steps)).toBe('done');
    expect(tx.workRuns()).toBe(1);
    expect(tx.statuses.map((s) => s.status)).toEqual(['Running', 'Succeeded']);
    expect(tx.statuses[1].properties).toMatchObject({ fragments_before: '27', fragments_after: '1' });
  });

  it('runs the work when it failed before it was done', async () => {
    const job = await queue.add('compact', { database: 'default', transactionId: randomUUID() });
    const tx = transaction({ unavailableOnce: 'Running' });
    expect(((await runTransactionJob(await taken(job.id!), tx.steps).catch((e: Error) => e)) as CatalogError).code).toBe(ErrorCode.ServiceUnavailable);
    expect(tx.workRuns()).toBe(0);
    expect(await runTransactionJob(await taken(job.id!), tx.steps)).toBe('done');
    expect(tx.workRuns()).toBe(1);
  });
});

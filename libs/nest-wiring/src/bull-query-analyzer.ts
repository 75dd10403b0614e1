import { Queue, QueueEvents } from 'bullmq';
import { CatalogError, ErrorCode } from '@app/catalog';
import { QueryAnalyzer } from '@app/application';
import { JobRefusal, QUEUES, QueryAnalysisJob, redisConnection } from '@app/jobs';
import { withTimeout } from './with-timeout';

/** Producer side of the analysis queue: enqueue, then wait for the worker's answer or time out. */
export class BullQueryAnalyzer implements QueryAnalyzer {
  readonly queue: Queue<QueryAnalysisJob, string>;
  private readonly events: QueueEvents;

  constructor(redisUrl: string, prefix: string, private readonly timeoutMs: number) {
    this.queue = new Queue<QueryAnalysisJob, string>(QUEUES.queryAnalysis, { connection: { ...redisConnection(redisUrl), maxRetriesPerRequest: 1 }, prefix });
    // QueueEvents blocks on its connection waiting for events: BullMQ needs it to retry without a
    // limit (maxRetriesPerRequest null), and would otherwise override it with a warning.
    this.events = new QueueEvents(QUEUES.queryAnalysis, { connection: { ...redisConnection(redisUrl), maxRetriesPerRequest: null }, prefix });
    // Every waiting request listens on the same QueueEvents.
    this.events.setMaxListeners(10_000);
    this.queue.on('error', () => undefined);
    this.events.on('error', () => undefined);
  }

  get queueForMetrics(): Queue<QueryAnalysisJob, string> {
    return this.queue;
  }

  async ping(): Promise<void> {
    await withTimeout(this.queue.count(), 1000);
  }

  async analyze(job: QueryAnalysisJob): Promise<string> {
    // A worker that finds a service unavailable waits for it only as long as this answer is wanted.
    const added = await this.queue.add('analyze', { ...job, answerBy: Date.now() + this.timeoutMs }, { removeOnComplete: 100, removeOnFail: 100, attempts: 1 });
    try {
      return await added.waitUntilFinished(this.events, this.timeoutMs);
    } catch (e) {
      const message = (e as Error).message;
      const refusal = parseRefusal(message);
      if (refusal) throw new CatalogError(refusal.code, refusal.error);
      if (/timed out|timeout/i.test(message)) {
        await added.remove().catch(() => undefined);
        throw new CatalogError(ErrorCode.ServiceUnavailable, `no worker answered the analysis within ${this.timeoutMs} ms; retry later`);
      }
      throw new CatalogError(ErrorCode.Internal, `the analysis failed: ${message}`);
    }
  }

  async close(): Promise<void> {
    await this.events.close();
    await this.queue.close();
  }
}

function parseRefusal(message: string): JobRefusal | undefined {
  try {
    const parsed = JSON.parse(message) as JobRefusal;
    return typeof parsed.code === 'number' && typeof parsed.error === 'string' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

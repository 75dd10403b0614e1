import { S3Client } from '@aws-sdk/client-s3';
import { Api, Reply } from '../http';
import { Ledger } from './ledger';
import { FaultRecord } from './nemesis';
import { Observer, Outcome, Refusal } from './observer';

export const NS = 'soak';
export const tablePath = (name: string) => `/v1/table/${NS}%24${name}`;
/** A manifest's final name under `_versions/` (V2: 20-digit zero-padded 2^64-1-version). */
export const finalName = (version: number) => `${((1n << 64n) - 1n - BigInt(version)).toString().padStart(20, '0')}.manifest`;

/** What every load driver shares: the balancer, the answers' observer, the ledger, the bucket. */
export interface LoadContext {
  url: string;
  apiKey: string;
  api: Api;
  obs: Observer;
  ledger: Ledger;
  s3: S3Client;
  bucket: string;
  running(): boolean;
  /** Table name -> its key prefix in the bucket. */
  keys: Map<string, string>;
  /** The faults started so far, times from `obs.started` (`endedMs` 0 while one lasts). */
  faults: FaultRecord[];
}

/** Whether the bucket was stopped at some moment between `from` and `to` (epoch milliseconds). */
export function bucketStoppedDuring(ctx: LoadContext, from: number, to: number): boolean {
  const origin = ctx.obs.started;
  return ctx.faults.some((f) => f.kind === 'stop-swift' && origin + f.startedMs <= to && (f.endedMs === 0 || origin + f.endedMs >= from));
}

export interface Called {
  outcome: Outcome;
  reply?: Reply;
}

/** One HTTP call through the balancer, its answer sorted by the observer. */
export async function call(
  ctx: LoadContext,
  driver: string,
  what: string,
  path: string,
  body: unknown,
  refusals: Refusal[] = [],
  headers?: Record<string, string>,
): Promise<Called> {
  const startedAt = Date.now();
  try {
    const reply = Buffer.isBuffer(body) ? await ctx.api.send('POST', path, body, headers ?? {}) : await ctx.api.post(path, body, headers);
    return { outcome: ctx.obs.answer(driver, what, reply, refusals, startedAt), reply };
  } catch (e) {
    return { outcome: ctx.obs.noAnswer(driver, what, e, startedAt) };
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The key prefix of a table's location in the bucket. */
export function keyOf(location: string, bucket: string): string {
  return location.slice(`s3://${bucket}/`.length).replace(/\/$/, '');
}

/** Calls `work` until it succeeds (set-up before the faults start, or the checker after them). */
export async function settled<T>(what: string, work: () => Promise<T | undefined>, ms = 120_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await work();
      if (value !== undefined) return value;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`${what}: no success within ${ms / 1000} s${last ? `: ${last}` : ''}`);
    await sleep(250);
  }
}

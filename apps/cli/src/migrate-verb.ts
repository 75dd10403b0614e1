import { syncJournaled } from '@app/application';
import { EventStore, WRITE_FREEZE_POLL_MS, isOperatorStream, recordOperatorEvent } from '@app/event-store';
import { describeDatabases, replayLog } from '@app/projections';
import { CommandFailure, EXIT } from './exit-codes';
import { copyLog } from './log-copy';
import { markLoaded, markLoading, requireEmptyStore, requireFinishedLoad } from './store-loading';
import { Progress } from './progress';
import { Verb, openExistingStore, openStore, shown } from './verb';

/** Servers see a freeze within one poll; appends already past the check get this long to land. */
const SETTLE_MS = 2 * WRITE_FREEZE_POLL_MS + 500;
/** The final copy ends once the source's head stood still this long. */
const QUIET_MS = 300;
/** Rounds of copying while the source serves, each catching up with what arrived during the last. */
const WARM_ROUNDS = 3;

export const migrateVerb: Verb = {
  name: 'migrate',
  summary: 'move the log to another event store while the servers keep serving',
  help: `Usage: lance-catalog migrate --to <EVENT_STORE value> [--from <EVENT_STORE value>] [--lease-seconds N] [--json]

Copies every database's events from the store --from names (default: EVENT_STORE) to the store
--to names, which must be empty (exit 3 otherwise). Values are those EVENT_STORE takes: 'embedded'
(the SQLite file in DATA_DIR), postgresql://..., esdb://...

1. The log is copied while the servers keep serving, in rounds that catch up with new commits.
2. The servers are asked, through the source store itself, to refuse writes (503 code 17 with
   Retry-After) for the final copy. The request is a lease of --lease-seconds (default 30),
   renewed while the command runs: if the command dies, writes resume when it runs out.
3. The catalog's digest (as 'npm run replay' prints it) is compared on both sides.
4. Equal: the source is marked as moved, so its servers keep refusing writes until they are
   started again with EVENT_STORE set to the new store; the command prints that setting.
   Different: writes resume on the source, nothing is marked, and the command exits 1.`,
  options: { from: { type: 'string' }, to: { type: 'string' }, 'lease-seconds': { type: 'string' } },
  async run({ values, config, json }) {
    const from = (values.from as string | undefined) ?? config.eventStore;
    const to = values.to as string | undefined;
    if (!to) throw new CommandFailure(EXIT.usage, 'migrate needs --to <EVENT_STORE value>');
    if (to === from) throw new CommandFailure(EXIT.usage, '--from and --to name the same event store');
    const leaseSeconds = Number(values['lease-seconds'] ?? 30);
    if (!Number.isInteger(leaseSeconds) || leaseSeconds < 5 || leaseSeconds > 3600) throw new CommandFailure(EXIT.usage, '--lease-seconds must be a whole number from 5 to 3600');
    const source = openSettingStore(from, config, true);
    const target = openSettingStore(to, config);
    const started = Date.now();
    try {
      await requireFinishedLoad(source, from);
      await requireEmptyStore(target, to, 'migrate only fills an empty store');
      // The target holds part of the catalog until the source is marked moved: no server starts on it before.
      await markLoading(target, 'migrate');
      const progress = new Progress('copying events', undefined, json);
      let copied = 0;
      let last: bigint | undefined;
      for (let round = 0; round < WARM_ROUNDS; round++) {
        const head = await source.headPosition();
        if (last !== undefined && head === last) break;
        const pass = await copyLog(source, target, { after: last, upTo: head }, (n) => progress.update(copied + n));
        copied += pass.copied;
        last = pass.lastPosition ?? last;
      }
      progress.done();
      const copiedWhileServing = copied;

      const frozenAt = Date.now();
      const lease = new FreezeLease(source, `copying the log to ${shown(to)}`, leaseSeconds * 1000);
      await lease.start();
      let digestsEqual = false;
      let databases: ReturnType<typeof describeDatabases> = [];
      let frozenMs = 0;
      try {
        await sleep(SETTLE_MS);
        for (;;) {
          const head = await source.headPosition();
          const tail = await copyLog(source, target, { after: last, upTo: head });
          copied += tail.copied;
          last = tail.lastPosition ?? last;
          await sleep(QUIET_MS);
          if ((await source.headPosition()) === head) break;
        }
        const memory = config.transactionMemorySeconds * 1000;
        const before = describeDatabases((await replayLog(source, memory, { upTo: last ?? 0n })).states);
        databases = describeDatabases((await replayLog(target, memory)).states);
        digestsEqual = JSON.stringify(before.map((d) => [d.database, d.digest])) === JSON.stringify(databases.map((d) => [d.database, d.digest]));
        // A lease that lapsed (renewals failing) would have let commits land after the copy.
        if (digestsEqual && (await landedAfter(source, last))) throw new CommandFailure(EXIT.findings, LANDED_AFTER);
        await lease.stop();
        if (digestsEqual) {
          await recordOperatorEvent(source, { type: 'EventStoreMoved', data: { to: shown(to) } });
          if (await landedAfter(source, last)) throw new CommandFailure(EXIT.findings, LANDED_AFTER);
          await markLoaded(target, 'migrate');
          // Manifests the source still journals (kept until the kernel writes them back) are synced
          // now: the target keeps no journal that could put them back after a crash.
          if (source.journal) await syncJournaled(source.journal);
        } else await recordOperatorEvent(source, { type: 'WritesResumed', data: { reason: 'the copy does not replay to the same catalog' } });
        frozenMs = Date.now() - frozenAt;
      } catch (e) {
        await lease.stop();
        await recordOperatorEvent(source, { type: 'WritesResumed', data: { reason: 'the migration failed' } }).catch(() => undefined);
        throw e;
      }
      const summary = {
        from: shown(from),
        to: shown(to),
        events: copied,
        events_copied_while_serving: copiedWhileServing,
        writes_refused_ms: frozenMs,
        databases: databases.length,
        digests_equal: digestsEqual,
        digests: databases.map((d) => ({ database: d.database, digest: d.digest, tables: d.tables, versions: d.versions })),
        seconds: (Date.now() - started) / 1000,
        next_step: digestsEqual ? `set EVENT_STORE=${shown(to)} on every server and worker, and restart them` : 'none: the source serves writes again',
      };
      return {
        exitCode: digestsEqual ? EXIT.ok : EXIT.findings,
        lines: digestsEqual
          ? [
              `The log now lives in ${shown(to)}. Servers on ${shown(from)} refuse writes (503 code 17) until restarted with:`,
              `  EVENT_STORE=${shown(to)}`,
            ]
          : [`The copy in ${shown(to)} does not replay to the same catalog as ${shown(from)}: writes resumed on ${shown(from)}; no server starts on ${shown(to)}: empty it before trying again.`],
        summary,
      };
    } finally {
      await source.close();
      await target.close();
    }
  },
};

const LANDED_AFTER = 'commits reached the source after the final copy (the freeze lapsed): writes resumed on the source; empty the target and run migrate again';

/** Whether a database's event lies in the source after the copied position. */
async function landedAfter(source: EventStore, last: bigint | undefined): Promise<boolean> {
  return (await source.readAll({ afterPosition: last, maxCount: 10_000 })).some((e) => !isOperatorStream(e.streamId));
}

function openSettingStore(setting: string, config: Parameters<typeof openStore>[1], existing = false): EventStore {
  try {
    return existing ? openExistingStore(setting, config) : openStore(setting, config);
  } catch (e) {
    if (e instanceof CommandFailure) throw e;
    throw new CommandFailure(EXIT.usage, (e as Error).message);
  }
}

/** The write freeze as a lease: recorded now, renewed at a third of its length until stopped. */
class FreezeLease {
  private timer?: NodeJS.Timeout;
  private renewing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: EventStore,
    private readonly reason: string,
    private readonly ms: number,
  ) {}

  async start(): Promise<void> {
    await this.renew();
    this.timer = setInterval(() => void this.renew().catch(() => undefined), Math.floor(this.ms / 3));
  }

  /** Stops renewing, once a renewal under way is recorded: nothing may follow the command's last word. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.renewing.catch(() => undefined);
  }

  private renew(): Promise<void> {
    this.renewing = recordOperatorEvent(this.store, { type: 'WritesFrozen', data: { reason: this.reason, untilMillis: Date.now() + this.ms } });
    return this.renewing;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

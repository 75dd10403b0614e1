import type { Table as LanceTable } from '@lancedb/lancedb';
import {
  CatalogError,
  CatalogView,
  ErrorCode,
  IndexState,
  TableState,
  MaintenanceKind,
  MaintenancePolicy,
  ObjectId,
  TableLine,
  TransactionStatus,
  decideRequestTableMaintenance,
  expiryCandidates,
  lineLocation,
  maintenancePolicy,
  findLine,
  requireLine,
  requireTable,
} from '@app/catalog';
import { TableMaintenanceJob } from '@app/jobs';
import { TagFiles, buildHnsw, manifestSummary, readHnswMeta } from '@app/lance';
import { ProjectionRegistry } from '@app/projections';
import { TableFiles } from '@app/storage';
import type { BranchService } from './branch-service';
import { CatalogWriter } from './catalog-writer';
import { DataService } from './data-service';
import { lanceInputError } from './lance-errors';
import { queueTransactionWork, transactionWorkOf } from './queued-work';
import { RequestContext } from './request-context';
import { StoredVersions } from './stored-versions';
import { TransactionJobQueue } from './transaction-job-queue.port';
import { recordTransactionStatus } from './transaction-status';
import { stateFor } from './request-state';

export type MaintenanceQueue = TransactionJobQueue<TableMaintenanceJob>;

/** Why a maintenance job removed versions, as TableVersionsDeleted records it. */
export const EXPIRED = 'expired by a maintenance job (the retention in force)';

/** How many kept versions' manifests an expiry reads for the oldest timestamp among them. */
const KEPT_READ = 256;
const FINAL: ReadonlySet<TransactionStatus> = new Set(['Succeeded', 'Failed', 'Canceled']);

/**
 * Table maintenance through the catalog: compaction, version expiry and index optimisation, each a
 * transaction on the `table-maintenance` queue with an index build's life, at most one per table
 * line at a time. Lance does the work (lancedb's `optimize`, the one maintenance call it has: it
 * compacts, folds new rows into indexes and, given a cutoff, removes older versions), through the
 * catalog, so its commits are ordinary `version/create`s; the catalog decides which versions expire
 * and records them deleted before their files go. The workers' planner (`evaluate`) asks for jobs
 * as the policy in force says.
 */
export class MaintenanceService {
  private readonly tags: TagFiles;

  constructor(
    private readonly writer: CatalogWriter,
    private readonly projections: ProjectionRegistry,
    private readonly data: DataService,
    private readonly stored: StoredVersions,
    private readonly queue: MaintenanceQueue,
    private readonly files: TableFiles,
    readonly defaults: MaintenancePolicy,
    /**
     * How far below the oldest version kept an expiry cuts. Lance's cleanup takes its cutoff as an
     * age from its own clock, read once its compaction pass is done: the margin absorbs that drift.
     */
    private readonly expiryMarginMs = 60_000,
    /** Branches whose create ended before their ref file was written are finished at a look. */
    private readonly branches?: Pick<BranchService, 'completeRefFile'>,
  ) {
    this.tags = new TagFiles(files);
  }

  private async view(ctx: RequestContext): Promise<CatalogView> {
    return stateFor(this.projections, ctx);
  }

  async request(
    ctx: RequestContext,
    req: { id: ObjectId; branch?: string; kind: MaintenanceKind; requestedBy?: 'request' | 'planner'; options?: Record<string, number> },
  ): Promise<{ job_id: string }> {
    const { transactionId } = await queueTransactionWork(this.writer, this.queue, ctx, {
      operation: OPERATIONS[req.kind],
      what: 'maintenance',
      decide: (view) =>
        decideRequestTableMaintenance(view, {
          id: req.id,
          branch: req.branch,
          kind: req.kind,
          requestedBy: req.requestedBy ?? 'request',
          options: req.options,
          finished: (tx) => FINAL.has(view.transaction(tx)?.status ?? 'Succeeded'),
        }),
      job: (id) => ({
        database: ctx.database,
        transactionId: id,
        table: [...req.id],
        kind: req.kind,
        ...(ctx.principal !== undefined ? { principal: ctx.principal } : {}),
        ...(req.branch !== undefined ? { branch: req.branch } : {}),
        ...(req.options ? { options: req.options } : {}),
      }),
    });
    return { job_id: transactionId };
  }

  /** The table line a job works on, and where its transaction stands. */
  async jobOf(ctx: RequestContext, id: ObjectId, transactionId: string, branch?: string) {
    const work = await transactionWorkOf(this.projections, ctx, id, transactionId);
    return { ...work, whole: work.table, table: requireLine(work.table, branch) };
  }

  setStatus(ctx: RequestContext, transactionId: string, status: TransactionStatus, properties: Record<string, string> = {}) {
    return recordTransactionStatus(this.writer, ctx, transactionId, status, properties);
  }

  /** Compaction: Lance rewrites small fragments into fewer, materialising deletions; its commit comes through the catalog. */
  async compact(ctx: RequestContext, line: TableLine): Promise<Record<string, string>> {
    return this.optimize(ctx, line, 'compacting the table failed');
  }

  /**
   * Folds rows written since an index's build into it (Lance's index optimisation runs with
   * compaction), and builds the catalog's own HNSW graphs again once the rows written since their
   * build pass the policy's share of the table (a graph cannot take rows in; QueryTable searches
   * those exactly meanwhile). A rebuilt graph replaces the old one whole; processes that loaded it
   * load the new one on their next query.
   */
  async optimizeIndices(ctx: RequestContext, line: TableLine, table: TableState): Promise<Record<string, string>> {
    const figures = await this.optimize(ctx, line, 'optimising the indexes failed');
    const { policy } = maintenancePolicy(await this.view(ctx), table, this.defaults);
    const stale = await this.staleGraphs(line, policy);
    if (stale.length === 0) return figures;
    const rebuilt: string[] = [];
    await this.withDataset(ctx, line, 'building an HNSW graph again failed', async (dataset) => {
      for (const index of stale) {
        const params = index.params as { distance_type?: string; m?: number; ef_construction?: number };
        const built = await buildHnsw(dataset, lineLocation(line), index.name, index.columns[0], {
          files: this.files,
          distanceType: params.distance_type,
          m: params.m,
          efConstruction: params.ef_construction,
        });
        rebuilt.push(`${index.name}:${built.indexedRows}`);
      }
    });
    return { ...figures, hnsw_rebuilt: rebuilt.join(',') };
  }

  /** The line's ready HNSW indexes whose graphs miss more than the policy's share of the rows the latest version holds. */
  private async staleGraphs(line: TableLine, policy: MaintenancePolicy): Promise<IndexState[]> {
    const graphs = [...line.indexes.values()].filter((i) => i.indexType === 'HNSW');
    if (!graphs.length || line.latestVersion === undefined) return [];
    const rows = (await manifestSummary(this.files, lineLocation(line), line.latestVersion, 0))?.physicalRows ?? 0;
    const stale: IndexState[] = [];
    for (const index of graphs) {
      const meta = await readHnswMeta(this.files, lineLocation(line), index.name);
      if (meta && rows > 0 && ((rows - meta.rows) * 100) / rows > policy.hnswRebuildPercent) stale.push(index);
    }
    return stale;
  }

  private async optimize(ctx: RequestContext, line: TableLine, what: string): Promise<Record<string, string>> {
    const started = Date.now();
    return this.withDataset(ctx, line, what, async (dataset) => {
      const before = await figures(dataset);
      // The epoch as the cutoff: nothing is old enough to be removed, so only versions expiry chose ever go.
      const stats = await dataset.optimize({ cleanupOlderThan: new Date(0), deleteUnverified: false });
      const after = await figures(dataset);
      return {
        fragments_before: String(before.fragments),
        fragments_after: String(after.fragments),
        files_removed: String(stats.compaction.filesRemoved),
        files_added: String(stats.compaction.filesAdded),
        unindexed_rows_before: String(before.unindexedRows),
        unindexed_rows_after: String(after.unindexedRows),
        rows_indexed: String(Math.max(0, before.unindexedRows - after.unindexedRows)),
        table_version: String(await dataset.version()),
        took_ms: String(Date.now() - started),
      };
    });
  }

  /**
   * Version expiry. The catalog decides: the line's versions the rule lets go (never the latest,
   * a tagged one or a branch's base), cut below the oldest version kept (tagged ones included: Lance
   * refuses a cleanup that would reach a tagged version), by the timestamps Lance itself wrote into
   * the manifests, so Lance's cleanup, which compares those, removes exactly these. They are
   * recorded deleted first, under this job's transaction: from then on no answer names them. Then
   * Lance removes their manifests and the files only they used. A crash in between leaves files the
   * next run removes; versions found gone afterwards are recorded too.
   */
  async expire(ctx: RequestContext, line: TableLine, transactionId: string, rule: { olderThanSeconds?: number; keepLast?: number }): Promise<Record<string, string>> {
    const started = Date.now();
    const location = lineLocation(line);
    const tagged = new Set(Object.values(await this.tags.list(line.location)).filter((t) => (t.branch ?? undefined) === line.branch).map((t) => t.version));
    // Compacted first, so the cleanup's own compaction pass has next to nothing to do.
    await this.withDataset(ctx, line, 'compacting the table failed', (dataset) => dataset.optimize({ cleanupOlderThan: new Date(0), deleteUnverified: false }));
    const table = requireTable(await this.view(ctx), line.id);
    const candidates = new Set(expiryCandidates(table, line.branch, rule, tagged, Date.now()));
    const kept = requireLine(table, line.branch)
      .versions.values()
      .map((v) => v.version)
      .filter((v) => !candidates.has(v))
      .sort((a, b) => a - b)
      .slice(0, KEPT_READ);
    const stamps = async (versions: number[]) =>
      new Map(await Promise.all(versions.map(async (v) => [v, (await manifestSummary(this.files, location, v, 0))?.timestampMillis] as const)));
    const keptStamps = [...(await stamps(kept)).values()].filter((t): t is number => t !== undefined);
    const done = (removed: number, bytes: number, cutoff?: number) => ({
      versions_removed: String(removed),
      bytes_removed: String(bytes),
      ...(cutoff !== undefined ? { cutoff: new Date(cutoff).toISOString() } : {}),
      took_ms: String(Date.now() - started),
    });
    if (keptStamps.length === 0 || candidates.size === 0) return done(0, 0);
    const cutoff = Math.min(...keptStamps) - this.expiryMarginMs;
    const candidateStamps = await stamps([...candidates]);
    // A candidate whose manifest is already gone (a run that crashed after recording) goes too.
    const expired = [...candidates].filter((v) => (candidateStamps.get(v) ?? -Infinity) < cutoff);
    if (expired.length === 0) return done(0, 0, cutoff);
    const recorded = await this.stored.record(ctx, line.id, line.branch, expired, EXPIRED, transactionId);
    const removed = await this.withDataset(ctx, line, 'removing expired versions failed', (dataset) =>
      dataset.optimize({ cleanupOlderThan: new Date(cutoff), deleteUnverified: false }),
    );
    const after = await this.stored.reconcile(ctx, line.id, line.branch);
    return done(recorded.length + after.length, removed.prune.bytesRemoved, cutoff);
  }

  private async withDataset<T>(ctx: RequestContext, line: TableLine, what: string, work: (dataset: LanceTable) => Promise<T>): Promise<T> {
    const dataset = await this.data.open(ctx, line);
    try {
      return await work(dataset);
    } catch (e) {
      throw lanceInputError(e, what);
    } finally {
      dataset.close();
    }
  }

  /**
   * The planner's look at one table line: versions whose manifests a client removed are recorded,
   * then the first job the policy calls for is requested (compaction, index optimisation, expiry),
   * unless one is queued or running there. Answers the kind requested, if any.
   */
  async evaluate(ctx: RequestContext, id: ObjectId, branch?: string): Promise<MaintenanceKind | undefined> {
    await this.stored.reconcile(ctx, id, branch);
    // A branch Lance cannot open yet is looked at again by the next sweep.
    if (branch !== undefined && this.branches && !(await this.branches.completeRefFile(ctx, id, branch))) return undefined;
    const view = await this.view(ctx);
    const table = view.table(id);
    if (!table?.managedVersioning || (branch !== undefined && !table.branches?.has(branch))) return undefined;
    const line = requireLine(table, branch);
    const running = (branch === undefined ? table : table.branches!.get(branch)!).maintenance;
    if (line.latestVersion === undefined || (running !== undefined && !FINAL.has(view.transaction(running)?.status ?? 'Succeeded'))) return undefined;
    const { policy, expirySetBy } = maintenancePolicy(view, table, this.defaults);
    const kind = await this.needed(ctx, line, table, policy);
    if (!kind) return undefined;
    const options = kind === 'expire_versions' ? expiryOptions(policy) : undefined;
    // An expiry deletes versions on the word of whoever set the retention: its events name them.
    const on = kind === 'expire_versions' && expirySetBy !== undefined ? { ...ctx, principal: expirySetBy } : ctx;
    await this.request(on, { id, branch, kind, requestedBy: 'planner', options }).catch((e) => {
      // Another planner asked first.
      if (!(e instanceof CatalogError && e.code === ErrorCode.ConcurrentModification)) throw e;
    });
    return kind;
  }

  private async needed(ctx: RequestContext, line: TableLine, table: ReturnType<CatalogView['table']> & object, policy: MaintenancePolicy): Promise<MaintenanceKind | undefined> {
    if (policy.compact) {
      const summary = await manifestSummary(this.files, lineLocation(line), line.latestVersion!, policy.smallFragmentRows);
      if (summary && (summary.fragments > policy.compactMaxFragments || summary.smallFragments > policy.compactMaxSmallFragments)) return 'compact';
    }
    if (policy.optimizeIndices && [...line.indexes.values()].some((i) => i.indexType !== 'HNSW')) {
      const unindexed = await this.withDataset(ctx, line, 'reading index statistics failed', async (dataset) => (await figures(dataset)).unindexedRows).catch(() => 0);
      if (unindexed > policy.maxUnindexedRows) return 'optimize_indices';
    }
    if (policy.optimizeIndices && (await this.staleGraphs(line, policy)).length) return 'optimize_indices';
    const rule = expiryOptions(policy);
    if (rule) {
      const tagged = new Set(Object.values(await this.tags.list(line.location)).filter((t) => (t.branch ?? undefined) === line.branch).map((t) => t.version));
      if (expiryCandidates(table, line.branch, { olderThanSeconds: rule.older_than_seconds, keepLast: rule.keep_last }, tagged, Date.now()).length) return 'expire_versions';
    }
    return undefined;
  }

  /** A line's maintenance as a caller sees it: the policy in force, its last jobs and what the planner would ask for now. */
  async describe(ctx: RequestContext, id: ObjectId, branch?: string) {
    const view = await this.view(ctx);
    const table = requireTable(view, id);
    const line = requireLine(table, branch);
    const { policy, problems } = maintenancePolicy(view, table, this.defaults);
    const last = findLine(table, branch)?.maintenance;
    const lastJob = last ? view.transaction(last) : undefined;
    const summary = line.latestVersion === undefined ? undefined : await manifestSummary(this.files, lineLocation(line), line.latestVersion, policy.smallFragmentRows);
    return {
      policy: policyJson(policy),
      ...(problems.length ? { policy_problems: problems } : {}),
      ...(lastJob ? { last_job: { transaction_id: lastJob.id, status: lastJob.status, properties: lastJob.properties } } : {}),
      ...(summary ? { latest_version: { version: line.latestVersion, fragments: summary.fragments, small_fragments: summary.smallFragments, rows: summary.physicalRows } } : {}),
      versions: line.versions.size,
    };
  }
}

const OPERATIONS: Record<MaintenanceKind, string> = {
  compact: 'CompactTable',
  expire_versions: 'ExpireTableVersions',
  optimize_indices: 'OptimizeTableIndices',
};

function expiryOptions(policy: MaintenancePolicy): { older_than_seconds?: number; keep_last?: number } | undefined {
  if (policy.expireOlderThanSeconds === undefined && policy.expireKeepLast === undefined) return undefined;
  return {
    ...(policy.expireOlderThanSeconds !== undefined ? { older_than_seconds: policy.expireOlderThanSeconds } : {}),
    ...(policy.expireKeepLast !== undefined ? { keep_last: policy.expireKeepLast } : {}),
  };
}

function policyJson(p: MaintenancePolicy) {
  return {
    compact: p.compact,
    compact_max_fragments: p.compactMaxFragments,
    compact_max_small_fragments: p.compactMaxSmallFragments,
    small_fragment_rows: p.smallFragmentRows,
    optimize_indices: p.optimizeIndices,
    max_unindexed_rows: p.maxUnindexedRows,
    hnsw_rebuild_percent: p.hnswRebuildPercent,
    ...(p.expireOlderThanSeconds !== undefined ? { expire_older_than_seconds: p.expireOlderThanSeconds } : {}),
    ...(p.expireKeepLast !== undefined ? { expire_keep_last: p.expireKeepLast } : {}),
  };
}

/** Fragments and rows not yet in any index, as Lance reports them. */
async function figures(dataset: LanceTable): Promise<{ fragments: number; unindexedRows: number }> {
  const stats = await dataset.stats();
  let unindexedRows = 0;
  for (const index of await dataset.listIndices()) unindexedRows += (await dataset.indexStats(index.name))?.numUnindexedRows ?? 0;
  return { fragments: stats.fragmentStats.numFragments, unindexedRows };
}

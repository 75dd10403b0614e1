import { Global, Inject, Logger, Module, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import {
  AnalysisService,
  BatchCommitService,
  CatalogWriter,
  WriteFreezeWatch,
  CreateTableService,
  DataChangeHandoff,
  DataMutationService,
  DataService,
  HistoryService,
  IndexService,
  ManifestJournal,
  NamespaceService,
  PurgeService,
  BackfillService,
  MaterializedViewService,
  TableService,
  TagService,
  BranchService,
  ClientStorageOptions,
  TransactionService,
  VersionService,
  StoredVersions,
  MaintenanceService,
  SchemaMetadataService,
  GrantService,
  WebhookService,
  FeedLedger,
} from '@app/application';
import { AppConfig } from '@app/config';
import { EventStore, createEventStore, unfinishedLoadProblem } from '@app/event-store';
import { ContainedDataPlane, DataPlane, DataPlaneExecutor, InProcessDataPlane, LanceTables, LocalManifestFinaliser, ManifestFinaliser, ObjectStoreManifestFinaliser, TagFiles } from '@app/lance';
import { ProjectionRegistry, Snapshots } from '@app/projections';
import { CredentialVending, StaticCredentials, StsCredentials, Warehouse } from '@app/storage';
import { BullBackfillQueue, BullIndexQueue, BullMaintenanceQueue, BullViewRefreshQueue } from './bull-transaction-queue';
import { BullPurgeQueue } from './bull-purge-queue';
import { MeteredEventStore } from './metered-event-store';
import { Metrics } from './metrics';
import { withTimeout } from './with-timeout';
import { BullQueryAnalyzer } from './bull-query-analyzer';
import { APP_CONFIG, CREDENTIAL_VENDING, DATA_PLANE, EVENT_STORE, FEED_LEDGER, MANIFEST_FINALISER, WEBHOOK_DELIVERY } from './tokens';
import { HttpWebhookDelivery } from './change-feed/http-webhook-delivery';
import { RedisFeedLedger } from './change-feed/redis-feed-ledger';

/** Wires the framework-free libraries into Nest: one instance of each per process. */
/** A queue of transactions' jobs on the configured Redis, each job given the configured attempts. */
function transactionQueue<Q>(queue: new (redisUrl: string, prefix: string, attempts: number) => Q) {
  return { provide: queue, inject: [APP_CONFIG], useFactory: (c: AppConfig) => new queue(c.redisUrl, c.queuePrefix, c.indexBuildAttempts) };
}

@Global()
@Module({
  providers: [
    { provide: Metrics, inject: [APP_CONFIG], useFactory: (c: AppConfig) => new Metrics({ databaseLabels: c.metricsDatabaseLabels }) },
    {
      provide: EVENT_STORE,
      inject: [APP_CONFIG, Metrics],
      useFactory: (c: AppConfig, m: Metrics) => new MeteredEventStore(createEventStore(c.eventStore, c.dataDir, { poolSize: c.eventStorePoolSize }), m),
    },
    {
      provide: ProjectionRegistry,
      inject: [EVENT_STORE, APP_CONFIG],
      useFactory: (s: EventStore, c: AppConfig) => {
        const log = new Logger('Snapshots');
        const snapshots = c.snapshotEvery > 0 ? new Snapshots({ dir: c.snapshotDir, every: c.snapshotEvery, log: (m) => log.log(m) }) : undefined;
        return new ProjectionRegistry(s, snapshots, c.transactionMemorySeconds * 1000);
      },
    },
    {
      provide: WriteFreezeWatch,
      inject: [EVENT_STORE],
      useFactory: (s: EventStore) => {
        const log = new Logger('WriteFreeze');
        // A store that holds part of a catalog, found at the first read (the API waits for it before listening) or later: no process serves it.
        return new WriteFreezeWatch(s, (m) => log.warn(m), undefined, (load) => {
          log.error(unfinishedLoadProblem(load));
          process.exit(1);
        });
      },
    },
    {
      provide: CatalogWriter,
      inject: [EVENT_STORE, ProjectionRegistry, WriteFreezeWatch],
      useFactory: (s: EventStore, p: ProjectionRegistry, f: WriteFreezeWatch) => new CatalogWriter(s, p, f),
    },
    { provide: Warehouse, inject: [APP_CONFIG], useFactory: (c: AppConfig) => new Warehouse(c.warehouse, c.objectStore) },
    {
      provide: CREDENTIAL_VENDING,
      inject: [APP_CONFIG, Warehouse],
      useFactory: (c: AppConfig, w: Warehouse): CredentialVending =>
        c.clientCredentials.mode === 'sts'
          ? new StsCredentials(c.clientCredentials, w, {
              chainingCheckMillis: c.clientCredentials.chainingCheckSeconds * 1000,
              log: (level, message) => (level === 'error' ? new Logger('sts').error(message) : new Logger('sts').log(message)),
            })
          : new StaticCredentials(w),
    },
    {
      provide: ClientStorageOptions,
      inject: [Warehouse, CREDENTIAL_VENDING],
      useFactory: (w: Warehouse, v: CredentialVending) => new ClientStorageOptions(w, v),
    },
    {
      provide: MANIFEST_FINALISER,
      inject: [Warehouse, APP_CONFIG],
      useFactory: (w: Warehouse, c: AppConfig): ManifestFinaliser =>
        w.onObjectStore
          ? new ObjectStoreManifestFinaliser(w, (m) => new Logger('manifests').warn(m), c.manifestPublishWaitMs)
          : new LocalManifestFinaliser(w),
    },
    {
      provide: LanceTables,
      inject: [APP_CONFIG, Warehouse],
      useFactory: (c: AppConfig, w: Warehouse) =>
        new LanceTables({
          // The API reaches itself; a worker on its own reaches the API it is configured with.
          selfUrl: () => c.selfUrl ?? c.catalogUrl,
          // Its calls are authenticated as the service; the caller's own rights were checked first.
          headers: { 'x-api-key': c.auth.serviceKey },
          cachedTables: c.tableCacheSize,
          files: w.files,
          storageOptions: w.serverStorageOptions,
        }),
    },
    {
      provide: DATA_PLANE,
      inject: [APP_CONFIG, Warehouse, LanceTables, Metrics],
      useFactory: (c: AppConfig, w: Warehouse, l: LanceTables, m: Metrics): DataPlane => {
        if (c.dataPlaneProcesses === 0) return new InProcessDataPlane(new DataPlaneExecutor(l));
        const log = new Logger('data-plane');
        return new ContainedDataPlane({
          processes: c.dataPlaneProcesses,
          perDatabase: c.dataPlanePerDatabase,
          queuePerDatabase: c.dataPlaneQueuePerDatabase,
          timeoutMs: c.dataPlaneTimeoutMs,
          memoryBytes: c.dataPlaneMemoryBytes,
          settings: () => ({
            selfUrl: c.selfUrl ?? c.catalogUrl,
            headers: { 'x-api-key': c.auth.serviceKey },
            cachedTables: c.tableCacheSize,
            storageOptions: w.serverStorageOptions,
          }),
          log: (level, message) => (level === 'warn' ? log.warn(message) : log.error(message)),
          onEnded: (reason) => m.dataPlaneEnded(reason),
          onWaited: (seconds) => m.dataPlaneQueueSeconds.observe(seconds),
          onQueueFull: () => m.dataPlaneQueueFull.inc(),
        });
      },
    },
    { provide: BullPurgeQueue, inject: [APP_CONFIG], useFactory: (c: AppConfig) => new BullPurgeQueue(c.redisUrl, c.queuePrefix) },
    {
      provide: PurgeService,
      inject: [CatalogWriter, ProjectionRegistry, Warehouse, EVENT_STORE, BullPurgeQueue, APP_CONFIG],
      useFactory: (w: CatalogWriter, p: ProjectionRegistry, wh: Warehouse, s: EventStore, q: BullPurgeQueue, c: AppConfig) =>
        new PurgeService(w, p, wh, s, q, c.dropRetentionSeconds * 1000),
    },
    {
      provide: NamespaceService,
      inject: [CatalogWriter, ProjectionRegistry, PurgeService],
      useFactory: (w: CatalogWriter, p: ProjectionRegistry, ps: PurgeService) => new NamespaceService(w, p, ps),
    },
    {
      provide: StoredVersions,
      inject: [CatalogWriter, ProjectionRegistry, Warehouse, MANIFEST_FINALISER, ManifestJournal],
      useFactory: (w: CatalogWriter, p: ProjectionRegistry, wh: Warehouse, f: ManifestFinaliser, j: ManifestJournal | null) =>
        new StoredVersions(w, p, wh.files, f, j ?? undefined),
    },
    {
      provide: TableService,
      inject: [CatalogWriter, ProjectionRegistry, Warehouse, LanceTables, APP_CONFIG, PurgeService, ClientStorageOptions, StoredVersions],
      useFactory: (w: CatalogWriter, p: ProjectionRegistry, wh: Warehouse, l: LanceTables, c: AppConfig, ps: PurgeService, o: ClientStorageOptions, sv: StoredVersions) =>
        new TableService(w, p, wh, l, { managedVersioning: c.managedVersioning, purges: ps, clientOptions: o, stored: sv }),
    },
    {
      provide: ManifestJournal,
      inject: [EVENT_STORE, APP_CONFIG],
      // Only where the store can hold manifests with their events (the embedded store), for
      // manifests on a local disk: an object store's copy is durable once it is answered.
      useFactory: (s: EventStore, c: AppConfig) =>
        s.journal && c.manifestDurability === 'journal' && !c.objectStore
          ? new ManifestJournal(s.journal, {
              flushMs: c.manifestJournalFlushMs,
              syncAgeMs: c.manifestJournalSyncAgeMs,
              maxPendingBytes: c.manifestJournalMaxPendingBytes,
              onError: (e) => new Logger('manifest-journal').error(`syncing journaled manifests failed (kept for the next try): ${String(e)}`),
            })
          : null,
    },
    // Shared by the data plane (its writes) and version/create (their commits).
    { provide: DataChangeHandoff, useFactory: () => new DataChangeHandoff() },
    {
      provide: VersionService,
      inject: [CatalogWriter, ProjectionRegistry, MANIFEST_FINALISER, ManifestJournal, DataChangeHandoff, Warehouse, StoredVersions],
      useFactory: (w: CatalogWriter, p: ProjectionRegistry, f: ManifestFinaliser, j: ManifestJournal | null, h: DataChangeHandoff, wh: Warehouse, sv: StoredVersions) =>
        new VersionService(w, p, f, j ? 'journaled' : 'synced', h, wh.files, sv),
    },
    {
      provide: SchemaMetadataService,
      inject: [ProjectionRegistry, VersionService, Warehouse],
      useFactory: (p: ProjectionRegistry, v: VersionService, wh: Warehouse) => new SchemaMetadataService(p, v, wh.files),
    },
    {
      provide: BatchCommitService,
      inject: [CatalogWriter, VersionService, Warehouse, APP_CONFIG, ClientStorageOptions],
      useFactory: (w: CatalogWriter, v: VersionService, wh: Warehouse, c: AppConfig, o: ClientStorageOptions) =>
        new BatchCommitService(w, v, wh, c.managedVersioning, o),
    },
    {
      provide: TransactionService,
      inject: [CatalogWriter, ProjectionRegistry, APP_CONFIG, HistoryService],
      useFactory: (w: CatalogWriter, p: ProjectionRegistry, c: AppConfig, h: HistoryService) =>
        new TransactionService(w, p, c.inputLimits.properties, (ctx, id) => h.transactionFromLog(ctx, id)),
    },
    { provide: HistoryService, inject: [EVENT_STORE], useFactory: (s: EventStore) => new HistoryService(s) },
    {
      provide: DataService,
      inject: [CatalogWriter, ProjectionRegistry, LanceTables, DATA_PLANE, DataChangeHandoff, APP_CONFIG, Warehouse, StoredVersions],
      useFactory: (w: CatalogWriter, p: ProjectionRegistry, l: LanceTables, d: DataPlane, h: DataChangeHandoff, c: AppConfig, wh: Warehouse, sv: StoredVersions) =>
        new DataService(w, p, l, d, { files: wh.files, hnswGraphs: c.hnswCacheSize, handoff: h, stored: sv }),
    },
    transactionQueue(BullIndexQueue),
    {
      provide: IndexService,
      inject: [CatalogWriter, ProjectionRegistry, DataService, BullIndexQueue],
      useFactory: (w: CatalogWriter, p: ProjectionRegistry, d: DataService, q: BullIndexQueue) => new IndexService(w, p, d, q),
    },
    transactionQueue(BullBackfillQueue),
    {
      provide: BackfillService,
      inject: [CatalogWriter, ProjectionRegistry, DataService, BullBackfillQueue],
      useFactory: (w: CatalogWriter, p: ProjectionRegistry, d: DataService, q: BullBackfillQueue) => new BackfillService(w, p, d, q),
    },
    transactionQueue(BullViewRefreshQueue),
    {
      provide: MaterializedViewService,
      inject: [CatalogWriter, ProjectionRegistry, DataService, LanceTables, BullViewRefreshQueue],
      useFactory: (w: CatalogWriter, p: ProjectionRegistry, d: DataService, l: LanceTables, q: BullViewRefreshQueue) =>
        new MaterializedViewService(w, p, d, l, q),
    },
    {
      provide: BullQueryAnalyzer,
      inject: [APP_CONFIG],
      useFactory: (c: AppConfig) => new BullQueryAnalyzer(c.redisUrl, c.queuePrefix, c.analyzeTimeoutMs),
    },
    {
      provide: AnalysisService,
      inject: [DataService, BullQueryAnalyzer],
      useFactory: (d: DataService, a: BullQueryAnalyzer) => new AnalysisService(d, a),
    },
    { provide: DataMutationService, inject: [DataService], useFactory: (d: DataService) => new DataMutationService(d) },
    {
      provide: TagService,
      inject: [DataService, CatalogWriter, Warehouse],
      useFactory: (d: DataService, w: CatalogWriter, wh: Warehouse) => new TagService(d, w, wh.onObjectStore ? new TagFiles(wh.files) : undefined),
    },
    {
      provide: FEED_LEDGER,
      inject: [APP_CONFIG],
      // Only with a change feed configured: otherwise no connection, no timer, nothing per commit.
      useFactory: (c: AppConfig): FeedLedger | null =>
        c.changeFeed.natsUrl || c.changeFeed.webhookSecretKey ? new RedisFeedLedger(c.redisUrl, c.queuePrefix) : null,
    },
    {
      provide: WEBHOOK_DELIVERY,
      inject: [APP_CONFIG],
      useFactory: (c: AppConfig): HttpWebhookDelivery | null =>
        c.changeFeed.webhookSecretKey
          ? new HttpWebhookDelivery({ allowPrivateNetworks: c.changeFeed.webhookAllowPrivateNetworks, timeoutMs: c.changeFeed.webhookTimeoutMs, dnsServers: c.changeFeed.webhookDnsServers })
          : null,
    },
    {
      provide: WebhookService,
      inject: [CatalogWriter, ProjectionRegistry, EVENT_STORE, FEED_LEDGER, APP_CONFIG, WEBHOOK_DELIVERY],
      useFactory: (w: CatalogWriter, p: ProjectionRegistry, s: EventStore, l: FeedLedger | null, c: AppConfig, d: HttpWebhookDelivery | null) =>
        new WebhookService(w, p, s, l, c.changeFeed.webhookSecretKey, d ?? undefined),
    },
    { provide: GrantService, inject: [CatalogWriter, ProjectionRegistry], useFactory: (w: CatalogWriter, p: ProjectionRegistry) => new GrantService(w, p) },
    {
      provide: BranchService,
      inject: [CatalogWriter, ProjectionRegistry, LanceTables, Warehouse, APP_CONFIG],
      useFactory: (w: CatalogWriter, p: ProjectionRegistry, l: LanceTables, wh: Warehouse, c: AppConfig) =>
        new BranchService(w, p, l, wh.files, wh.onObjectStore, c.maintenance.branchCreateGraceMs),
    },
    transactionQueue(BullMaintenanceQueue),
    {
      provide: MaintenanceService,
      inject: [CatalogWriter, ProjectionRegistry, DataService, StoredVersions, BullMaintenanceQueue, Warehouse, APP_CONFIG, BranchService],
      useFactory: (w: CatalogWriter, p: ProjectionRegistry, d: DataService, sv: StoredVersions, q: BullMaintenanceQueue, wh: Warehouse, c: AppConfig, b: BranchService) =>
        new MaintenanceService(w, p, d, sv, q, wh.files, c.maintenance.defaults, c.maintenance.expiryMarginMs, b),
    },
    {
      provide: CreateTableService,
      inject: [TableService, DataService],
      useFactory: (t: TableService, d: DataService) => new CreateTableService(t, d),
    },
  ],
  exports: [
    Metrics,
    EVENT_STORE,
    ProjectionRegistry,
    CatalogWriter,
    Warehouse,
    CREDENTIAL_VENDING,
    MANIFEST_FINALISER,
    LanceTables,
    NamespaceService,
    TableService,
    VersionService,
    SchemaMetadataService,
    BatchCommitService,
    TransactionService,
    HistoryService,
    DataService,
    CreateTableService,
    IndexService,
    BullIndexQueue,
    BullBackfillQueue,
    BackfillService,
    BullViewRefreshQueue,
    MaterializedViewService,
    BullPurgeQueue,
    PurgeService,
    BullQueryAnalyzer,
    DataMutationService,
    TagService,
    GrantService,
    WebhookService,
    FEED_LEDGER,
    WEBHOOK_DELIVERY,
    BranchService,
    AnalysisService,
    StoredVersions,
    BullMaintenanceQueue,
    MaintenanceService,
  ],
})
export class CatalogModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly projections: ProjectionRegistry,
    private readonly lance: LanceTables,
    @Inject(DATA_PLANE) private readonly dataPlane: DataPlane,
    private readonly indexQueue: BullIndexQueue,
    private readonly backfillQueue: BullBackfillQueue,
    private readonly viewRefreshQueue: BullViewRefreshQueue,
    private readonly maintenanceQueue: BullMaintenanceQueue,
    private readonly analyzer: BullQueryAnalyzer,
    private readonly purgeQueue: BullPurgeQueue,
    @Inject(ManifestJournal) private readonly journal: ManifestJournal | null,
    @Inject(CREDENTIAL_VENDING) private readonly vending: CredentialVending,
    @Inject(FEED_LEDGER) private readonly feedLedger: FeedLedger | null,
    @Inject(WEBHOOK_DELIVERY) private readonly webhookDelivery: HttpWebhookDelivery | null,
  ) {}

  /** Before anything is served: manifests a crash left only in the journal go back on disk. */
  async onModuleInit(): Promise<void> {
    if (!this.journal) return;
    const found = await this.journal.recover();
    if (found.restored || found.gone) {
      new Logger('manifest-journal').warn(
        `recovered journaled manifests: ${found.restored} restored, ${found.intact} intact, ${found.gone} with their table gone`,
      );
    }
    this.journal.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.journal?.stop().catch(() => undefined);
    // With Redis away, closing a queue would wait for a reconnect that may never come.
    await withTimeout(this.indexQueue.close(), 2000).catch(() => undefined);
    await withTimeout(this.backfillQueue.close(), 2000).catch(() => undefined);
    await withTimeout(this.viewRefreshQueue.close(), 2000).catch(() => undefined);
    await withTimeout(this.maintenanceQueue.close(), 2000).catch(() => undefined);
    await withTimeout(this.analyzer.close(), 2000).catch(() => undefined);
    await withTimeout(this.purgeQueue.close(), 2000).catch(() => undefined);
    await this.dataPlane.close();
    await this.lance.close();
    this.vending.close();
    await this.feedLedger?.close();
    this.webhookDelivery?.close();
    // Before the store closes: a snapshot records the id of the last event it covers.
    await this.projections.close();
    await this.store.close();
  }
}


import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import {
  AnalysisService,
  BatchCommitService,
  CatalogWriter,
  CreateTableService,
  DataMutationService,
  DataService,
  HistoryService,
  IndexService,
  NamespaceService,
  TableService,
  TagService,
  TransactionService,
  VersionService,
} from '@app/application';
import { AppConfig } from '@app/config';
import { EventStore, createEventStore } from '@app/event-store';
import { LanceTables, ManifestFinaliser, Warehouse } from '@app/lance';
import { ProjectionRegistry } from '@app/projections';
import { BullIndexQueue } from './bull-index-queue';
import { MeteredEventStore } from './metered-event-store';
import { Metrics } from './metrics';
import { withTimeout } from './with-timeout';
import { BullQueryAnalyzer } from './bull-query-analyzer';
import { APP_CONFIG, EVENT_STORE } from './tokens';

/** Wires the framework-free libraries into Nest: one instance of each per process. */
@Global()
@Module({
  providers: [
    { provide: Metrics, useFactory: () => new Metrics() },
    {
      provide: EVENT_STORE,
      inject: [APP_CONFIG, Metrics],
      useFactory: (c: AppConfig, m: Metrics) => new MeteredEventStore(createEventStore(c.eventStore, c.dataDir), m),
    },
    { provide: ProjectionRegistry, inject: [EVENT_STORE], useFactory: (s: EventStore) => new ProjectionRegistry(s) },
    {
      provide: CatalogWriter,
      inject: [EVENT_STORE, ProjectionRegistry],
      useFactory: (s: EventStore, p: ProjectionRegistry) => new CatalogWriter(s, p),
    },
    { provide: Warehouse, inject: [APP_CONFIG], useFactory: (c: AppConfig) => new Warehouse(c.warehouse) },
    { provide: ManifestFinaliser, inject: [Warehouse], useFactory: (w: Warehouse) => new ManifestFinaliser(w) },
    {
      provide: LanceTables,
      inject: [APP_CONFIG],
      useFactory: (c: AppConfig) =>
        new LanceTables({
          // The API reaches itself; a worker on its own reaches the API it is configured with.
          selfUrl: () => c.selfUrl ?? c.catalogUrl,
          // Its calls are authenticated as the service; the caller's own rights were checked first.
          headers: { 'x-api-key': c.auth.serviceKey },
          cachedTables: c.tableCacheSize,
        }),
    },
    {
      provide: NamespaceService,
      inject: [CatalogWriter, ProjectionRegistry],
      useFactory: (w: CatalogWriter, p: ProjectionRegistry) => new NamespaceService(w, p),
    },
    {
      provide: TableService,
      inject: [CatalogWriter, ProjectionRegistry, Warehouse, LanceTables, APP_CONFIG],
      useFactory: (w: CatalogWriter, p: ProjectionRegistry, wh: Warehouse, l: LanceTables, c: AppConfig) =>
        new TableService(w, p, wh, l, { managedVersioning: c.managedVersioning }),
    },
    {
      provide: VersionService,
      inject: [CatalogWriter, ProjectionRegistry, ManifestFinaliser],
      useFactory: (w: CatalogWriter, p: ProjectionRegistry, f: ManifestFinaliser) => new VersionService(w, p, f),
    },
    {
      provide: BatchCommitService,
      inject: [CatalogWriter, VersionService, Warehouse, APP_CONFIG],
      useFactory: (w: CatalogWriter, v: VersionService, wh: Warehouse, c: AppConfig) =>
        new BatchCommitService(w, v, wh, c.managedVersioning),
    },
    {
      provide: TransactionService,
      inject: [CatalogWriter, ProjectionRegistry],
      useFactory: (w: CatalogWriter, p: ProjectionRegistry) => new TransactionService(w, p),
    },
    { provide: HistoryService, inject: [EVENT_STORE], useFactory: (s: EventStore) => new HistoryService(s) },
    {
      provide: DataService,
      inject: [CatalogWriter, ProjectionRegistry, LanceTables],
      useFactory: (w: CatalogWriter, p: ProjectionRegistry, l: LanceTables) => new DataService(w, p, l),
    },
    {
      provide: BullIndexQueue,
      inject: [APP_CONFIG],
      useFactory: (c: AppConfig) => new BullIndexQueue(c.redisUrl, c.queuePrefix, c.indexBuildAttempts),
    },
    {
      provide: IndexService,
      inject: [CatalogWriter, ProjectionRegistry, DataService, BullIndexQueue],
      useFactory: (w: CatalogWriter, p: ProjectionRegistry, d: DataService, q: BullIndexQueue) => new IndexService(w, p, d, q),
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
      inject: [DataService, CatalogWriter],
      useFactory: (d: DataService, w: CatalogWriter) => new TagService(d, w),
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
    ManifestFinaliser,
    LanceTables,
    NamespaceService,
    TableService,
    VersionService,
    BatchCommitService,
    TransactionService,
    HistoryService,
    DataService,
    CreateTableService,
    IndexService,
    BullIndexQueue,
    BullQueryAnalyzer,
    DataMutationService,
    TagService,
    AnalysisService,
  ],
})
export class CatalogModule implements OnApplicationShutdown {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly lance: LanceTables,
    private readonly indexQueue: BullIndexQueue,
    private readonly analyzer: BullQueryAnalyzer,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    // With Redis away, closing a queue would wait for a reconnect that may never come.
    await withTimeout(this.indexQueue.close(), 2000).catch(() => undefined);
    await withTimeout(this.analyzer.close(), 2000).catch(() => undefined);
    await this.lance.close();
    await this.store.close();
  }
}

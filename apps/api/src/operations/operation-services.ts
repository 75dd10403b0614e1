import type { INestApplicationContext } from '@nestjs/common';
import {
  AnalysisService,
  BackfillService,
  BatchCommitService,
  BranchService,
  CreateTableService,
  DataMutationService,
  DataService,
  HistoryService,
  IndexService,
  MaterializedViewService,
  NamespaceService,
  TableService,
  TagService,
  TransactionService,
  VersionService,
} from '@app/application';
import { AppConfig } from '@app/config';
import { EventStore } from '@app/event-store';
import { APP_CONFIG, BullBackfillQueue, BullIndexQueue, BullQueryAnalyzer, BullViewRefreshQueue, EVENT_STORE, Metrics } from '@app/core';
import { ProjectionRegistry } from '@app/projections';
import { Warehouse } from '@app/storage';
import type { Entry } from './operation';

/** What the handlers of the HTTP edge call: the application's services and the process's own parts. */
export interface OperationServices {
  readonly config: AppConfig;
  readonly namespaces: NamespaceService;
  readonly tables: TableService;
  readonly creates: CreateTableService;
  readonly versions: VersionService;
  readonly batches: BatchCommitService;
  readonly data: DataService;
  readonly analysis: AnalysisService;
  readonly mutations: DataMutationService;
  readonly indexes: IndexService;
  readonly backfills: BackfillService;
  readonly views: MaterializedViewService;
  readonly tags: TagService;
  readonly branches: BranchService;
  readonly transactions: TransactionService;
  readonly history: HistoryService;
  readonly projections: ProjectionRegistry;
  readonly store: EventStore;
  readonly warehouse: Warehouse;
  readonly metrics: Metrics;
  readonly queues: { index: BullIndexQueue; backfill: BullBackfillQueue; viewRefresh: BullViewRefreshQueue; analysis: BullQueryAnalyzer };
  /** Every entry of the edge, for what describes the edge itself (the served OpenAPI document). */
  readonly operations: readonly Entry[];
}

/** The services as Nest built them for this process. */
export function servicesOf(app: INestApplicationContext, operations: readonly Entry[]): OperationServices {
  return {
    config: app.get<AppConfig>(APP_CONFIG),
    namespaces: app.get(NamespaceService),
    tables: app.get(TableService),
    creates: app.get(CreateTableService),
    versions: app.get(VersionService),
    batches: app.get(BatchCommitService),
    data: app.get(DataService),
    analysis: app.get(AnalysisService),
    mutations: app.get(DataMutationService),
    indexes: app.get(IndexService),
    backfills: app.get(BackfillService),
    views: app.get(MaterializedViewService),
    tags: app.get(TagService),
    branches: app.get(BranchService),
    transactions: app.get(TransactionService),
    history: app.get(HistoryService),
    projections: app.get(ProjectionRegistry),
    store: app.get<EventStore>(EVENT_STORE),
    warehouse: app.get(Warehouse),
    metrics: app.get(Metrics),
    queues: { index: app.get(BullIndexQueue), backfill: app.get(BullBackfillQueue), viewRefresh: app.get(BullViewRefreshQueue), analysis: app.get(BullQueryAnalyzer) },
    operations,
  };
}

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
  MaintenanceService,
  MaterializedViewService,
  NamespaceService,
  TableService,
  TagService,
  TransactionService,
  VersionService,
  SchemaMetadataService,
  GrantService,
  WebhookService,
} from '@app/application';
import { AppConfig } from '@app/config';
import { EventStore } from '@app/event-store';
import { APP_CONFIG, BullBackfillQueue, BullIndexQueue, BullQueryAnalyzer, BullViewRefreshQueue, CREDENTIAL_VENDING, EVENT_STORE, Metrics } from '@app/nest-wiring';
import { ProjectionRegistry } from '@app/projections';
import { CredentialVending, Warehouse } from '@app/storage';

/** What the handlers of the HTTP edge call: the application's services and the process's own parts. */
export interface AppServices {
  readonly config: AppConfig;
  readonly namespaces: NamespaceService;
  readonly tables: TableService;
  readonly creates: CreateTableService;
  readonly versions: VersionService;
  readonly schemaMetadata: SchemaMetadataService;
  readonly batches: BatchCommitService;
  readonly data: DataService;
  readonly analysis: AnalysisService;
  readonly mutations: DataMutationService;
  readonly indexes: IndexService;
  readonly backfills: BackfillService;
  readonly views: MaterializedViewService;
  readonly maintenance: MaintenanceService;
  readonly tags: TagService;
  readonly branches: BranchService;
  readonly transactions: TransactionService;
  readonly history: HistoryService;
  readonly grants: GrantService;
  readonly webhooks: WebhookService;
  readonly projections: ProjectionRegistry;
  readonly store: EventStore;
  readonly warehouse: Warehouse;
  /** What clients are handed to reach a table's files: static options, or STS sessions. */
  readonly vending: CredentialVending;
  readonly metrics: Metrics;
  readonly queues: { index: BullIndexQueue; backfill: BullBackfillQueue; viewRefresh: BullViewRefreshQueue; analysis: BullQueryAnalyzer };
}

/** The services as Nest built them for this process. */
export function servicesOf(app: INestApplicationContext): AppServices {
  return {
    config: app.get<AppConfig>(APP_CONFIG),
    namespaces: app.get(NamespaceService),
    tables: app.get(TableService),
    creates: app.get(CreateTableService),
    versions: app.get(VersionService),
    schemaMetadata: app.get(SchemaMetadataService),
    batches: app.get(BatchCommitService),
    data: app.get(DataService),
    analysis: app.get(AnalysisService),
    mutations: app.get(DataMutationService),
    indexes: app.get(IndexService),
    backfills: app.get(BackfillService),
    views: app.get(MaterializedViewService),
    maintenance: app.get(MaintenanceService),
    tags: app.get(TagService),
    branches: app.get(BranchService),
    transactions: app.get(TransactionService),
    history: app.get(HistoryService),
    grants: app.get(GrantService),
    webhooks: app.get(WebhookService),
    projections: app.get(ProjectionRegistry),
    store: app.get<EventStore>(EVENT_STORE),
    warehouse: app.get(Warehouse),
    vending: app.get<CredentialVending>(CREDENTIAL_VENDING),
    metrics: app.get(Metrics),
    queues: { index: app.get(BullIndexQueue), backfill: app.get(BullBackfillQueue), viewRefresh: app.get(BullViewRefreshQueue), analysis: app.get(BullQueryAnalyzer) },
  };
}

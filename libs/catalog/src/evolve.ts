import { CatalogEnvelope, EventMetadata, VersionRecord } from './events';
import { ObjectId } from './ids';
import { CatalogStore } from './catalog-view';
import { branchLocation } from './dataset-layout';
import { LineState, findLine } from './table-line';
import { TableState } from './table-state';
import { TableVersions } from './table-versions';

/** Events that ask a worker for work: their transaction starts Queued. */
const QUEUED_WORK = new Set(['TableIndexRequested', 'TableBackfillRequested', 'MaterializedViewRefreshRequested', 'TableMaintenanceRequested']);

/** Folds one event into the state. Events are facts: evolve never refuses one. */
export function evolve(store: CatalogStore, envelope: CatalogEnvelope): void {
  const { event, metadata } = envelope;
  if (event.type !== 'TransactionAltered' && !store.hasTransaction(metadata.transactionId)) {
    const queued = QUEUED_WORK.has(event.type);
    store.putTransaction({
      id: metadata.transactionId,
      // Asynchronous work starts queued; everything else completed before it was recorded.
      status: queued ? 'Queued' : 'Succeeded',
      operation: metadata.operation,
      properties: { operation: metadata.operation, started_at: metadata.occurredAt },
      ...(queued ? { table: (event.data as { table: ObjectId }).table } : {}),
    });
  }
  switch (event.type) {
    case 'NamespaceCreated':
      store.putNamespace({ id: event.data.namespace, properties: event.data.properties, ...setBy(metadata) });
      return;
    case 'GrantIssued':
    case 'GrantRevoked':
      store.grantsForUpdate().apply({
        ...event.data,
        issued: event.type === 'GrantIssued',
        at: metadata.occurredAt,
        ...(metadata.principal !== undefined ? { by: metadata.principal } : {}),
        revision: envelope.revision,
      });
      return;
    case 'WebhookSubscriptionCreated':
      store.webhooksForUpdate().put({
        ...event.data,
        createdAt: metadata.occurredAt,
        ...(metadata.principal !== undefined ? { createdBy: metadata.principal } : {}),
        createdRevision: envelope.revision,
        status: 'active',
      });
      return;
    case 'WebhookSubscriptionDeleted':
      store.webhooksForUpdate().remove(event.data.subscriptionId);
      return;
    case 'WebhookSubscriptionPaused': {
      const s = store.webhooks.get(event.data.subscriptionId);
      if (s) store.webhooksForUpdate().put({ ...s, status: 'paused', paused: { reason: event.data.reason, at: metadata.occurredAt, revision: event.data.revision } });
      return;
    }
    case 'NamespaceDropped':
      store.removeNamespace(event.data.namespace);
      return;
    case 'TableDeclared':
      store.putTable({
        id: event.data.table,
        uuid: event.data.tableUuid,
        location: event.data.location,
        properties: event.data.properties,
        ...setBy(metadata),
        managedVersioning: event.data.managedVersioning,
        origin: 'declared',
        versions: new TableVersions(event.data.location),
        indexes: new Map(),
      });
      return;
    case 'TableRegistered': {
      const table: TableState = {
        id: event.data.table,
        uuid: event.data.tableUuid,
        location: event.data.location,
        properties: event.data.properties,
        ...setBy(metadata),
        managedVersioning: event.data.managedVersioning,
        origin: 'registered',
        versions: new TableVersions(event.data.location),
        indexes: new Map(),
      };
      for (const v of event.data.versions) addVersion(table, v);
      store.putTable(table);
      return;
    }
    case 'TableDropped':
    case 'TableDeregistered':
      store.removeTable(event.data.table);
      return;
    case 'TablePurgeScheduled':
      store.putPurge({
        table: event.data.table,
        tableUuid: event.data.tableUuid,
        location: event.data.location,
        purgeAfterMillis: event.data.purgeAfterMillis,
      });
      return;
    case 'TablePurged':
    case 'TablePurgeCanceled':
      store.removePurge(event.data.tableUuid);
      return;
    case 'TableRenamed': {
      // A copy the store may change: a draft must not hand the base's versions to the renamed table.
      const table = store.tableForUpdate(event.data.table);
      if (!table) return;
      store.removeTable(event.data.table);
      store.putTable({ ...table, id: event.data.newTable });
      // A job queued or running on the table goes on with it, and reports under its new name.
      for (const id of store.transactionsOfTable(event.data.table)) store.transactionForUpdate(id)!.table = event.data.newTable;
      return;
    }
    case 'TableVersionCreated': {
      const table = store.tableForUpdate(event.data.table);
      if (!table) return;
      const { table: _id, tableUuid: _uuid, branch, ...record } = event.data;
      if (branch === undefined) addVersion(table, record);
      else {
        const line = findLine(table, branch);
        if (!line) return;
        addToLine(line, record);
      }
      return;
    }
    case 'TableVersionsDeleted': {
      const table = store.tableForUpdate(event.data.table);
      const line = findLine(table, event.data.branch);
      if (!line) return;
      line.versions.deleteMany(event.data.versions);
      if (line.latestVersion !== undefined && !line.versions.has(line.latestVersion)) {
        line.latestVersion = line.versions.latest();
      }
      return;
    }
    case 'TableBranchCreated': {
      const table = store.tableForUpdate(event.data.table);
      if (!table) return;
      const { table: _id, tableUuid: _uuid, branch, ...origin } = event.data;
      table.branches ??= new Map();
      table.branches.set(branch, {
        name: branch,
        ...origin,
        versions: new TableVersions(branchLocation(table.location, branch)),
        indexes: new Map(),
      });
      return;
    }
    case 'TableBranchDeleted': {
      const table = store.tableForUpdate(event.data.table);
      table?.branches?.delete(event.data.branch);
      if (table?.branches?.size === 0) delete table.branches;
      return;
    }
    case 'TableIndexRequested': {
      const table = store.tableForUpdate(event.data.table);
      const line = findLine(table, event.data.branch);
      if (!line) return;
      line.indexes.set(event.data.indexName, {
        name: event.data.indexName,
        columns: event.data.columns,
        indexType: event.data.indexType,
        params: event.data.params,
        transactionId: metadata.transactionId,
      });
      const tx = store.transactionForUpdate(metadata.transactionId);
      if (tx) {
        Object.assign(tx.properties, { index_name: event.data.indexName, index_type: event.data.indexType });
        if (event.data.branch !== undefined) tx.properties.branch = event.data.branch;
      }
      return;
    }
    case 'TableIndexDropped': {
      const table = store.tableForUpdate(event.data.table);
      findLine(table, event.data.branch)?.indexes.delete(event.data.indexName);
      return;
    }
    case 'TableMaintenanceRequested': {
      const table = store.tableForUpdate(event.data.table);
      const line = findLine(table, event.data.branch);
      if (line) line.maintenance = metadata.transactionId;
      const tx = store.transactionForUpdate(metadata.transactionId);
      if (tx) {
        Object.assign(tx.properties, { maintenance: event.data.kind, requested_by: event.data.requestedBy });
        if (event.data.branch !== undefined) tx.properties.branch = event.data.branch;
      }
      return;
    }
    case 'TableBackfillRequested': {
      const tx = store.transactionForUpdate(metadata.transactionId);
      if (tx) {
        Object.assign(tx.properties, event.data.options);
        tx.properties.column = event.data.column;
        if (event.data.branch !== undefined) tx.properties.branch = event.data.branch;
      }
      return;
    }
    case 'MaterializedViewRefreshRequested': {
      const tx = event.data.options && store.transactionForUpdate(metadata.transactionId);
      if (tx) Object.assign(tx.properties, event.data.options);
      return;
    }
    case 'TableRestored':
    case 'TableTagChanged':
      // The restored content arrives as its own TableVersionCreated; this event is the audit record.
      return;
    case 'TableDataChanged': {
      // The data arrives as its own TableVersionCreated; this event is the audit record, and holds
      // the properties the write set on the table.
      if (!event.data.properties) return;
      const table = store.tableForUpdate(event.data.table);
      if (table) table.properties = { ...table.properties, ...event.data.properties };
      return;
    }
    case 'TransactionAltered': {
      const tx = store.transactionForUpdate(event.data.transactionId);
      if (!tx) return;
      if (event.data.status) tx.status = event.data.status;
      for (const key of event.data.unsetProperties) delete tx.properties[key];
      Object.assign(tx.properties, event.data.setProperties);
      const touched = [...event.data.unsetProperties, ...Object.keys(event.data.setProperties)];
      if (touched.length === 0) return;
      const callers = new Set(tx.callerKeys ?? []);
      for (const key of touched) callers.delete(key);
      if (event.data.byCaller) for (const key of Object.keys(event.data.setProperties)) callers.add(key);
      if (callers.size > 0) tx.callerKeys = [...callers].sort();
      else delete tx.callerKeys;
      return;
    }
  }
}

function addVersion(table: TableState, record: VersionRecord): void {
  addToLine(table, record);
  table.namingScheme = record.namingScheme;
}

/** Adds a version to a line of versions (main's or a branch's), moving its latest version on. */
function addToLine(line: LineState, record: VersionRecord): void {
  line.versions.add(record);
  if (line.latestVersion === undefined || record.version > line.latestVersion) line.latestVersion = record.version;
}

/** Who set a namespace's or table's properties, when the request named a principal. */
function setBy(metadata: EventMetadata): { propertiesSetBy?: string } {
  return metadata.principal !== undefined ? { propertiesSetBy: metadata.principal } : {};
}

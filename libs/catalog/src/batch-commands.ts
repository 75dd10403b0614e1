import { CatalogError } from './errors';
import { CatalogEvent, EventMetadata } from './events';
import { evolve } from './evolve';
import { ObjectId } from './ids';
import { CatalogView } from './catalog-view';
import { DraftCatalog } from './draft-catalog';
import { DeclareTable, decideDeclareTable, decideDeregisterTable } from './table-commands';
import { CreateTableVersion, VersionRange, decideCreateTableVersion, decideDeleteTableVersions } from './version-commands';

export type BatchOperation =
  | { kind: 'declare_table'; command: DeclareTable }
  | { kind: 'create_table_version'; command: CreateTableVersion }
  | { kind: 'delete_table_versions'; id: ObjectId; ranges: VersionRange[]; branch?: string; tagged?: ReadonlyMap<number, string> }
  | { kind: 'deregister_table'; id: ObjectId };

export interface BatchDecision {
  events: CatalogEvent[];
  /** The events each operation produced, in request order. */
  perOperation: CatalogEvent[][];
}

/**
 * Decides every operation against the effects of the ones before it, on a draft: either every
 * operation is valid and all their events are returned together, or the first failure is thrown.
 */
export function decideBatch(view: CatalogView, operations: readonly BatchOperation[], metadata: EventMetadata): BatchDecision {
  const draft = new DraftCatalog(view);
  const perOperation: CatalogEvent[][] = [];
  operations.forEach((op, index) => {
    let events: CatalogEvent[];
    try {
      events = decideOne(draft, op);
    } catch (e) {
      if (e instanceof CatalogError && operations.length > 1) {
        throw new CatalogError(e.code, `operation ${index + 1} (${op.kind}): ${e.message}`, e.detail);
      }
      throw e;
    }
    for (const event of events) evolve(draft, { event, metadata, revision: -1 });
    perOperation.push(events);
  });
  return { events: perOperation.flat(), perOperation };
}

function decideOne(view: CatalogView, op: BatchOperation): CatalogEvent[] {
  switch (op.kind) {
    case 'declare_table':
      return decideDeclareTable(view, op.command);
    case 'create_table_version':
      return decideCreateTableVersion(view, op.command);
    case 'delete_table_versions':
      return decideDeleteTableVersions(view, op.id, op.ranges, op.branch, op.tagged);
    case 'deregister_table':
      return decideDeregisterTable(view, op.id);
  }
}

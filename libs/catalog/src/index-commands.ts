import { CatalogError, ErrorCode, invalidInput } from './errors';
import { CatalogEvent } from './events';
import { ObjectId, displayId } from './ids';
import { CatalogView } from './catalog-view';
import { IndexState, TableState } from './table-state';
import { describeLine, requireLine } from './table-line';
import { requireTable } from './table-commands';

/** The index types the catalog builds: Lance's own, plus HNSW kept beside the dataset. */
export const VECTOR_INDEX_TYPES = ['IVF_FLAT', 'IVF_PQ', 'IVF_HNSW_SQ', 'IVF_HNSW_PQ', 'HNSW'] as const;
export const SCALAR_INDEX_TYPES = ['BTREE', 'BITMAP', 'LABEL_LIST', 'FTS'] as const;
export const INDEX_TYPES = [...VECTOR_INDEX_TYPES, 'IVF_SQ', ...SCALAR_INDEX_TYPES] as const;
export type IndexType = (typeof INDEX_TYPES)[number];

export function parseIndexType(value: string): IndexType {
  const normalised = value.toUpperCase().replace(/-/g, '_');
  const found = INDEX_TYPES.find((t) => t === normalised);
  if (!found) throw invalidInput(`unknown index_type '${value}'; expected one of ${INDEX_TYPES.join(', ')}`);
  if (found === 'IVF_SQ') {
    throw new CatalogError(ErrorCode.Unsupported, 'IVF_SQ cannot be built by the Lance library this server runs; use IVF_HNSW_SQ or IVF_PQ');
  }
  return found;
}

export type IndexStatus = 'queued' | 'building' | 'ready' | 'failed' | 'canceled';

/** An index's status is its build transaction's, in the words ListTableIndices uses. */
export function indexStatusOf(view: CatalogView, index: IndexState): IndexStatus {
  switch (view.transaction(index.transactionId)?.status) {
    case 'Queued':
      return 'queued';
    case 'Running':
      return 'building';
    case 'Succeeded':
      return 'ready';
    case 'Canceled':
      return 'canceled';
    default:
      return 'failed';
  }
}

function liveIndex(view: CatalogView, table: TableState, name: string): IndexState | undefined {
  const index = table.indexes.get(name);
  if (!index) return undefined;
  const status = indexStatusOf(view, index);
  return status === 'failed' || status === 'canceled' ? undefined : index;
}

export interface RequestTableIndex {
  id: ObjectId;
  /** Absent: the main branch. */
  branch?: string;
  indexName?: string;
  column: string;
  indexType: IndexType;
  params: Record<string, unknown>;
}

/** Lance names an index `<column>_idx`; a second one on the column gets a number. */
export function defaultIndexName(table: TableState, column: string): string {
  const base = `${column.replace(/[^A-Za-z0-9_]/g, '_')}_idx`;
  if (!table.indexes.has(base)) return base;
  for (let i = 2; ; i++) if (!table.indexes.has(`${base}_${i}`)) return `${base}_${i}`;
}

export function decideRequestTableIndex(view: CatalogView, cmd: RequestTableIndex): CatalogEvent[] {
  const table = requireLine(requireTable(view, cmd.id), cmd.branch);
  const indexName = cmd.indexName ?? defaultIndexName(table, cmd.column);
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(indexName)) {
    throw invalidInput(`index name '${indexName}' must be 1-128 characters of [A-Za-z0-9_-]`);
  }
  if (liveIndex(view, table, indexName)) {
    throw new CatalogError(ErrorCode.TableIndexAlreadyExists, `index '${indexName}' already exists on table '${displayId(cmd.id)}'`);
  }
  return [
    {
      type: 'TableIndexRequested',
      data: {
        table: table.id,
        tableUuid: table.uuid,
        indexName,
        columns: [cmd.column],
        indexType: cmd.indexType,
        params: cmd.params,
        ...(table.branch !== undefined ? { branch: table.branch } : {}),
      },
    },
  ];
}

export function requireIndex(view: CatalogView, id: ObjectId, name: string, branch?: string): IndexState {
  const table = requireLine(requireTable(view, id), branch);
  const index = table.indexes.get(name);
  if (!index) throw new CatalogError(ErrorCode.TableIndexNotFound, `index '${name}' does not exist on ${describeLine(table)}`);
  return index;
}

export function decideDropTableIndex(view: CatalogView, id: ObjectId, name: string, branch?: string): CatalogEvent[] {
  const table = requireTable(view, id);
  requireIndex(view, id, name, branch);
  const on = branch !== undefined ? { branch } : {};
  return [{ type: 'TableIndexDropped', data: { table: table.id, tableUuid: table.uuid, indexName: name, ...on } }];
}

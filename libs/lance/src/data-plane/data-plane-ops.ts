import type { TableQuery } from '../lance-query';
import type { ManagedTableRef } from '../lance-tables';

/** The table an operation works on, as the caller's caught-up catalog state describes it. */
export interface DataPlaneTable extends ManagedTableRef {
  database: string;
  managedVersioning: boolean;
  location: string;
}

export interface MergeInsertOptions {
  on: string[];
  whenMatchedUpdateAll: boolean;
  whenMatchedUpdateAllFilter?: string;
  whenNotMatchedInsertAll: boolean;
  whenNotMatchedBySourceDelete: boolean;
  whenNotMatchedBySourceDeleteFilter?: string;
  timeoutMs?: number;
  useIndex?: boolean;
}

export interface ColumnAlteration {
  path: string;
  rename?: string;
  nullable?: boolean;
  dataType?: string;
}

export interface FieldMetadataUpdate {
  path: string;
  metadata: Record<string, string | null>;
  replace?: boolean;
}

/** Reads and writes of table data: everything Lance's native code does with a request's expressions or bodies. */
export type DataPlaneOp =
  | { kind: 'count'; table: DataPlaneTable; version?: number; predicate?: string }
  | { kind: 'query'; table: DataPlaneTable; version?: number; query: TableQuery }
  | { kind: 'explain'; table: DataPlaneTable; version?: number; query: TableQuery; verbose: boolean }
  | { kind: 'analyze'; table: DataPlaneTable; version?: number; query: TableQuery }
  /** `body`: the rows as the request carried them, an Arrow IPC stream (or file) checked for structure only (`readArrowBody`). */
  | { kind: 'insert'; table: DataPlaneTable; mode: 'append' | 'overwrite'; body: Uint8Array }
  /** The first data of a declared table, or a table's content replaced under a new schema. */
  | { kind: 'create'; table: DataPlaneTable; mode: 'create' | 'overwrite'; body: Uint8Array; storageOptions?: Record<string, string> }
  | { kind: 'mergeInsert'; table: DataPlaneTable; body: Uint8Array; options: MergeInsertOptions }
  | { kind: 'update'; table: DataPlaneTable; predicate?: string; updates: Array<[string, string]> }
  | { kind: 'delete'; table: DataPlaneTable; predicate: string }
  | { kind: 'addColumns'; table: DataPlaneTable; columns: Array<{ name: string; expression: string }>; computed: boolean }
  | { kind: 'alterColumns'; table: DataPlaneTable; alterations: ColumnAlteration[] }
  | { kind: 'dropColumns'; table: DataPlaneTable; columns: string[] }
  | { kind: 'updateFieldMetadata'; table: DataPlaneTable; updates: FieldMetadataUpdate[] };

export type DataPlaneKind = DataPlaneOp['kind'];

/** What each operation answers. */
export interface DataPlaneResults {
  count: number;
  query: Uint8Array;
  explain: string;
  analyze: string;
  insert: { version: number };
  create: { version: number };
  mergeInsert: { version: number; numInsertedRows: number; numUpdatedRows: number; numDeletedRows: number };
  update: { version: number; rowsUpdated: number };
  delete: { version: number; numDeletedRows: number };
  addColumns: { version: number };
  alterColumns: { version: number };
  dropColumns: { version: number };
  updateFieldMetadata: { version: number; fields: Array<{ path: string; metadata: Record<string, string> }> };
}

export type DataPlaneResult<K extends DataPlaneKind> = DataPlaneResults[K];

/** Called back while an operation runs. */
export interface DataPlaneHooks {
  /**
   * A write is about to commit through a writer connection of this catalog with this id (see
   * WRITER_HEADER); the commit waits until this returns, so the caller can expect it.
   */
  writing?(writer: string): void | Promise<void>;
  /** A writer already announced through `writing` for this call: a commit by it needs no second announcement. */
  expectedWriter?: string;
  /** The writer a write committed through (told after the fact, for the caller to expect next time). */
  wrote?(writer: string): void;
}

/** Where a failure happened: opening the table, or the operation's own work on it. */
export type DataPlanePhase = 'open' | 'work';

/**
 * A failure of Lance, or of the process that ran it, with the phase it happened in. `message` is
 * Lance's own text: for the log, never for an answer.
 */
export class DataPlaneFailure extends Error {
  constructor(
    readonly phase: DataPlanePhase,
    message: string,
    /** Set when the operation ended with its process (a crash, the memory cap, its time, its caller gone) or never ran. */
    readonly ended?: 'crashed' | 'memory' | 'timeout' | 'cancelled' | 'unavailable',
    /** The time limit that ended it, for `timeout`. */
    readonly timeoutMs?: number,
  ) {
    super(message);
    this.name = 'DataPlaneFailure';
  }
}

/** Who asks for an operation, and what bounds it beyond the data plane's own limits. */
export interface DataPlaneCall {
  /** Shares of the processes are per database (the table's) and, within one, per principal. */
  principal?: string;
  /** Aborted when the caller leaves: an operation waiting never runs, a running one is stopped. */
  signal?: AbortSignal;
}

/** The time limit an operation sets itself (MergeInsertIntoTable's `timeout`), if any. */
export function ownTimeoutMs(op: DataPlaneOp): number | undefined {
  return op.kind === 'mergeInsert' ? op.options.timeoutMs : undefined;
}

/** Runs data operations somewhere: in this process, or in processes whose crash costs one request. */
export interface DataPlane {
  run<K extends DataPlaneKind>(op: Extract<DataPlaneOp, { kind: K }>, hooks?: DataPlaneHooks, call?: DataPlaneCall): Promise<DataPlaneResult<K>>;
  close(): Promise<void>;
}

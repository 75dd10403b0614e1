import { CatalogError } from '@app/catalog';
import { DataPlaneFailure, DataPlaneOp, DataPlanePhase } from './data-plane-ops';

/** What a data-plane process is started with (in its environment, so no secret shows in `ps`). */
export interface DataPlaneProcessSettings {
  selfUrl: string;
  headers: Record<string, string>;
  cachedTables: number;
  storageOptions?: Record<string, string>;
  /** The file request bodies arrive through (see ContainedDataPlane); the parent unlinks it once this process has it open. */
  inputPath: string;
}

export const SETTINGS_ENV = 'LANCE_CATALOG_DATA_PLANE';

/** A failure as it crosses between processes. */
export interface WireError {
  catalog?: { code: number; message: string; detail?: string; internal?: string };
  phase: DataPlanePhase;
  message: string;
}

export type ToChild =
  /** `input`: the op's `body` was written to the input file, this many bytes from its start. */
  | { t: 'run'; id: number; op: DataPlaneOp; input?: number; expectedWriter?: string }
  | { t: 'go'; id: number };

export type FromChild =
  | { t: 'ready' }
  | { t: 'writing'; id: number; writer: string }
  | { t: 'done'; id: number; result: unknown; writer?: string }
  | { t: 'failed'; id: number; error: WireError };

export function toWire(e: unknown): WireError {
  if (e instanceof CatalogError) return { catalog: { code: e.code, message: e.message, detail: e.detail, internal: e.internal }, phase: 'work', message: e.message };
  if (e instanceof DataPlaneFailure) return { phase: e.phase, message: e.message };
  return { phase: 'work', message: e instanceof Error ? e.message : String(e) };
}

export function fromWire(w: WireError): Error {
  if (w.catalog) return new CatalogError(w.catalog.code, w.catalog.message, w.catalog.detail, w.catalog.internal);
  return new DataPlaneFailure(w.phase, w.message);
}

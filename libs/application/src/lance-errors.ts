import { CatalogError, ErrorCode } from '@app/catalog';
import { DataPlaneFailure, classifyLanceFailure } from '@app/lance';

/**
 * A Lance failure as the caller's answer, in the catalog's words (see classifyLanceFailure); Lance's
 * own text rides along as the error's `internal` part, which only the log sees. The catalog has
 * already checked that the table and version exist, so what Lance refuses is the request's content.
 * `version`: the version the operation read, for a failure that finds its files gone.
 */
export function lanceInputError(e: unknown, what: string, writing = false, version?: number): unknown {
  if (e instanceof CatalogError) return e;
  const message = e instanceof Error ? e.message : String(e);
  const failure = classifyLanceFailure(message, writing);
  const refusal = (code: ErrorCode, text: string) => new CatalogError(code, text, undefined, message);
  switch (failure.kind) {
    case 'catalog-unreachable':
      return refusal(ErrorCode.ServiceUnavailable, `${what}: the catalog API is unreachable (a worker reaches it at CATALOG_URL); retry later`);
    case 'catalog-unavailable':
      return refusal(ErrorCode.ServiceUnavailable, `${what}: the catalog could not serve the table's own reads and commits (a service it needs is down); retry later`);
    case 'commit-unknown':
      // Lance keeps its staging manifest and cannot tell; neither can the server without it.
      return refusal(
        ErrorCode.ServiceUnavailable,
        `${what}: whether the write was committed could not be confirmed while a service was down; read the table before retrying`,
      );
    case 'store-unreachable':
      return refusal(ErrorCode.ServiceUnavailable, `${what}: the warehouse's object store is unavailable; retry later`);
    case 'conflict':
      return refusal(ErrorCode.ConcurrentModification, `${what}: another writer changed the table meanwhile; retry`);
    case 'missing-files':
      return version === undefined
        ? refusal(ErrorCode.InvalidTableState, `${what}: files of the table are missing from storage`)
        : refusal(ErrorCode.TableVersionNotFound, `${what}: files of version ${version} of the table are missing from storage`);
    case 'panic':
      return refusal(ErrorCode.Internal, `${what}: Lance failed internally; the request id names it in the server's log`);
    case 'no-column':
      return refusal(ErrorCode.TableColumnNotFound, `${what}: ${failure.reason ?? 'an expression names a column the table does not have'}`);
    case 'schema':
      return refusal(ErrorCode.TableSchemaValidationError, `${what}: the data does not fit the table's schema${failure.reason ? `: ${failure.reason}` : ''}`);
    case 'refused':
      return refusal(ErrorCode.InvalidInput, `${what}: ${failure.reason ?? 'Lance refused the request for this table (the request id names the reason in the server\'s log)'}`);
  }
}

/**
 * A data-plane failure as the caller's answer: the process running the operation ended under it
 * (the memory cap, a crash, none available), or Lance refused it (see lanceInputError); a failure
 * to open the table is told as such.
 */
export function dataPlaneError(e: unknown, what: string, writing = false, version?: number): unknown {
  if (!(e instanceof DataPlaneFailure)) return lanceInputError(e, what, writing, version);
  switch (e.ended) {
    case 'memory':
      return new CatalogError(
        ErrorCode.InvalidInput,
        `${what}: the operation needed more memory than one data operation may take (DATA_PLANE_MEMORY_MB); narrow it with a filter, fewer columns or a smaller k`,
        undefined,
        e.message,
      );
    case 'timeout':
      return new CatalogError(
        ErrorCode.InvalidInput,
        `${what}: the operation ran longer than ${e.timeoutMs} ms, the most one data operation may take (DATA_PLANE_TIMEOUT_MS, or the request's timeout), and was stopped; narrow it with a filter, fewer columns or a smaller k`,
        undefined,
        e.message,
      );
    case 'cancelled':
      return new CatalogError(ErrorCode.ServiceUnavailable, `${what}: the caller left, so the operation was stopped`, undefined, e.message);
    case 'crashed':
      return new CatalogError(ErrorCode.Internal, `${what}: the process running it ended abnormally; the catalog is unaffected`, undefined, e.message);
    case 'unavailable':
      return new CatalogError(ErrorCode.ServiceUnavailable, `${what}: no data-plane process is available; retry later`, undefined, e.message);
  }
  return e.phase === 'open' ? lanceInputError(e, 'opening the table failed', false, version) : lanceInputError(e, what, writing, version);
}

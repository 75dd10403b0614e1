import { CatalogError, ErrorCode } from '@app/catalog';

/**
 * Lance reports bad input (an unknown column, a filter that does not parse, a schema that does
 * not fit) as plain errors; the catalog has already checked that the table and version exist,
 * so what Lance refuses is the request's content.
 */
export function lanceInputError(e: unknown, what: string, writing = false): unknown {
  if (e instanceof CatalogError) return e;
  const message = e instanceof Error ? e.message : String(e);
  if (storageUnreachable(message) && catalogCall(message)) {
    return new CatalogError(ErrorCode.ServiceUnavailable, `${what}: the catalog API is unreachable (a worker reaches it at CATALOG_URL); retry later`, firstLine(message));
  }
  if (storageUnreachable(message)) {
    return new CatalogError(ErrorCode.ServiceUnavailable, `${what}: the warehouse's object store is unavailable; retry later`, firstLine(message));
  }
  // Lance gave up committing against concurrent writers (it retries compatible ones itself).
  if (/commit conflict/i.test(message)) {
    return new CatalogError(ErrorCode.ConcurrentModification, `${what}: another writer changed the table meanwhile; retry`, firstLine(message));
  }
  if (writing && /schema|field .* not found|not found in (the )?schema|append with different|type mismatch|cannot cast|incompatible|nullab/i.test(message)) {
    return new CatalogError(ErrorCode.TableSchemaValidationError, `${what}: the data does not fit the table's schema`, firstLine(message));
  }
  return new CatalogError(ErrorCode.InvalidInput, `${what}: ${firstLine(message)}`);
}

/** Lance's object store could not be reached, or answered with a server error other than "not implemented". */
export function storageUnreachable(message: string): boolean {
  return (
    /(error sending request|connection refused|tcp connect error|dns error|connection reset|operation timed out|client error \(Connect\))/i.test(message) ||
    /non-2xx status code: 5(0[02-9]|[1-9]\d)/i.test(message)
  );
}

/** The failed call went to the catalog's own REST API (managed tables are opened through it), not to the store. */
function catalogCall(message: string): boolean {
  return /\/v1\/(table|namespace|transaction)\//.test(message);
}

function firstLine(message: string): string {
  return message.split('\n')[0].slice(0, 500);
}

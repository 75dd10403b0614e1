/** Lance Namespace error codes, as the spec numbers them. Clients classify failures by this integer. */
export enum ErrorCode {
  Unsupported = 0,
  NamespaceNotFound = 1,
  NamespaceAlreadyExists = 2,
  NamespaceNotEmpty = 3,
  TableNotFound = 4,
  TableAlreadyExists = 5,
  TableIndexNotFound = 6,
  TableIndexAlreadyExists = 7,
  TableTagNotFound = 8,
  TableTagAlreadyExists = 9,
  TransactionNotFound = 10,
  TableVersionNotFound = 11,
  TableColumnNotFound = 12,
  InvalidInput = 13,
  ConcurrentModification = 14,
  PermissionDenied = 15,
  Unauthenticated = 16,
  ServiceUnavailable = 17,
  Internal = 18,
  InvalidTableState = 19,
  TableSchemaValidationError = 20,
  Throttling = 21,
  TableBranchNotFound = 22,
  TableBranchAlreadyExists = 23,
}

const HTTP_STATUS: Record<ErrorCode, number> = {
  [ErrorCode.Unsupported]: 406,
  [ErrorCode.NamespaceNotFound]: 404,
  [ErrorCode.NamespaceAlreadyExists]: 409,
  [ErrorCode.NamespaceNotEmpty]: 409,
  [ErrorCode.TableNotFound]: 404,
  [ErrorCode.TableAlreadyExists]: 409,
  [ErrorCode.TableIndexNotFound]: 404,
  [ErrorCode.TableIndexAlreadyExists]: 409,
  [ErrorCode.TableTagNotFound]: 404,
  [ErrorCode.TableTagAlreadyExists]: 409,
  [ErrorCode.TransactionNotFound]: 404,
  [ErrorCode.TableVersionNotFound]: 404,
  [ErrorCode.TableColumnNotFound]: 404,
  [ErrorCode.InvalidInput]: 400,
  [ErrorCode.ConcurrentModification]: 409,
  [ErrorCode.PermissionDenied]: 403,
  [ErrorCode.Unauthenticated]: 401,
  [ErrorCode.ServiceUnavailable]: 503,
  [ErrorCode.Internal]: 500,
  [ErrorCode.InvalidTableState]: 409,
  [ErrorCode.TableSchemaValidationError]: 400,
  [ErrorCode.Throttling]: 429,
  [ErrorCode.TableBranchNotFound]: 404,
  [ErrorCode.TableBranchAlreadyExists]: 409,
};

export function httpStatusOf(code: ErrorCode): number {
  return HTTP_STATUS[code] ?? 500;
}

/**
 * An expected failure: carries the Lance code so the HTTP layer can answer without guessing.
 * `internal` is what the log gets beside the request id and the caller never sees (Lance's own
 * text, with its source and file paths).
 */
export class CatalogError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly detail?: string,
    readonly internal?: string,
  ) {
    super(message);
    this.name = 'CatalogError';
  }
}

export const invalidInput = (message: string, detail?: string) =>
  new CatalogError(ErrorCode.InvalidInput, message, detail);

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

/**
 * An expected failure: carries the Lance code so whoever answers (the HTTP edge, a worker's job) can
 * tell the caller what happened without guessing.
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

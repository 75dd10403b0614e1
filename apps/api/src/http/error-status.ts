import { ErrorCode } from '@app/catalog';

/** The HTTP status the REST binding gives each Lance error code (reference/rest-binding.md). */
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

import { CatalogError, ErrorCode, invalidInput } from './errors';
import { TransactionStatus } from './events';
import { parseMode } from './modes';

export const TRANSACTION_STATUSES: readonly TransactionStatus[] = ['Queued', 'Running', 'Succeeded', 'Failed', 'Canceled'];

export const TERMINAL_STATUSES: ReadonlySet<TransactionStatus> = new Set(['Succeeded', 'Failed', 'Canceled']);

/** The transitions DESIGN.md allows; anything else is refused. */
const ALLOWED: Record<TransactionStatus, readonly TransactionStatus[]> = {
  Queued: ['Running', 'Canceled', 'Failed'],
  Running: ['Succeeded', 'Failed', 'Canceled'],
  Succeeded: [],
  Failed: [],
  Canceled: [],
};

export function parseTransactionStatus(value: unknown): TransactionStatus {
  if (value === undefined || value === null) throw invalidInput(`a status is required: one of ${TRANSACTION_STATUSES.join(', ')}`);
  return parseMode(value, TRANSACTION_STATUSES, 'transaction status', 'Queued');
}

export function checkTransition(id: string, from: TransactionStatus, to: TransactionStatus): void {
  if (TERMINAL_STATUSES.has(from)) {
    throw new CatalogError(
      ErrorCode.InvalidTableState,
      `transaction '${id}' is ${from}, a final status; it cannot become ${to}`,
    );
  }
  if (from === to) return;
  if (!ALLOWED[from].includes(to)) {
    throw new CatalogError(ErrorCode.InvalidTableState, `transaction '${id}' cannot go from ${from} to ${to}`);
  }
}

import { CatalogError, ErrorCode, invalidInput } from './errors';
import { CatalogEvent, Properties, TransactionStatus } from './events';
import { CatalogView } from './catalog-view';
import { TransactionState } from './transaction-table';
import { checkTransition } from './transaction-status';
import { PropertyLimits, checkKey, propertyMapSize } from './property-limits';

export type SetPropertyMode = 'Overwrite' | 'Fail' | 'Skip';
export const SET_PROPERTY_MODES: readonly SetPropertyMode[] = ['Overwrite', 'Fail', 'Skip'];
export type UnsetPropertyMode = 'Skip' | 'Fail';
export const UNSET_PROPERTY_MODES: readonly UnsetPropertyMode[] = ['Skip', 'Fail'];

export type AlterTransactionAction =
  | { kind: 'setStatus'; status: TransactionStatus }
  | { kind: 'setProperty'; key: string; value: string; mode: SetPropertyMode }
  | { kind: 'unsetProperty'; key: string; mode: UnsetPropertyMode };

export function requireTransaction(view: CatalogView, id: string): TransactionState {
  const tx = view.transaction(id);
  if (!tx) throw new CatalogError(ErrorCode.TransactionNotFound, `transaction '${id}' does not exist`);
  return tx;
}

/**
 * Applies every action in order to a copy; one failure refuses the whole list. With `limits`, a
 * list that leaves the transaction's properties larger than they may be, and larger than they
 * were, is refused (workers record their own properties without this bound).
 */
export function decideAlterTransaction(
  view: CatalogView,
  id: string,
  actions: readonly AlterTransactionAction[],
  limits?: PropertyLimits,
  byCaller = false,
): CatalogEvent[] {
  if (actions.length === 0) throw invalidInput('actions must hold at least one action');
  for (const action of actions) if (action.kind !== 'setStatus') checkKey(action.key, 'transaction property');
  const tx = requireTransaction(view, id);
  if (byCaller) refuseServerProperties(tx, actions);
  let status = tx.status;
  let statusChanged = false;
  const properties: Properties = { ...tx.properties };
  const set: Properties = {};
  const unset = new Set<string>();
  for (const action of actions) {
    switch (action.kind) {
      case 'setStatus':
        checkTransition(id, status, action.status);
        statusChanged ||= status !== action.status;
        status = action.status;
        break;
      case 'setProperty':
        if (Object.hasOwn(properties, action.key)) {
          if (action.mode === 'Fail') throw invalidInput(`transaction property '${action.key}' already exists`);
          if (action.mode === 'Skip') break;
        }
        properties[action.key] = action.value;
        set[action.key] = action.value;
        unset.delete(action.key);
        break;
      case 'unsetProperty':
        if (!Object.hasOwn(properties, action.key)) {
          if (action.mode === 'Fail') throw invalidInput(`transaction property '${action.key}' does not exist`);
          break;
        }
        delete properties[action.key];
        delete set[action.key];
        unset.add(action.key);
        break;
    }
  }
  if (!statusChanged && Object.keys(set).length === 0 && unset.size === 0) return [];
  if (limits && Object.keys(set).length > 0) checkGrowth(tx.properties, properties, limits);
  return [
    {
      type: 'TransactionAltered',
      data: {
        transactionId: id,
        ...(statusChanged ? { status } : {}),
        setProperties: set,
        unsetProperties: [...unset],
        ...(byCaller ? { byCaller: true as const } : {}),
        ...(tx.table ? { table: tx.table } : {}),
      },
    },
  ];
}

function checkGrowth(before: Properties, after: Properties, limits: PropertyLimits): void {
  const was = propertyMapSize(before);
  const is = propertyMapSize(after);
  if (is.count > limits.maxCount && is.count > was.count) {
    throw invalidInput(`transaction properties would hold ${is.count} entries; at most ${limits.maxCount} are allowed (PROPERTIES_MAX_COUNT)`);
  }
  if (is.bytes > limits.maxBytes && is.bytes > was.bytes) {
    throw invalidInput(`transaction properties would hold ${is.bytes} bytes of keys and values; at most ${limits.maxBytes} are allowed (PROPERTIES_MAX_BYTES)`);
  }
}

/**
 * What the server wrote on a transaction (its operation, who asked, a job's cutoff and figures) is
 * its record of the job: a caller may set and unset only properties callers set. A `Skip` set of
 * one leaves it as it is, as the mode says, and passes.
 */
function refuseServerProperties(tx: TransactionState, actions: readonly AlterTransactionAction[]): void {
  const callers = new Set(tx.callerKeys ?? []);
  for (const action of actions) {
    if (action.kind === 'setStatus' || !Object.hasOwn(tx.properties, action.key) || callers.has(action.key)) continue;
    if (action.kind === 'setProperty' && action.mode === 'Skip') continue;
    throw new CatalogError(
      ErrorCode.PermissionDenied,
      `transaction property '${action.key}' is the server's record of the job; a caller may not ${action.kind === 'setProperty' ? 'set' : 'unset'} it`,
    );
  }
}

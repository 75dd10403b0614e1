import { CatalogError, CatalogEvent, CatalogState, ErrorCode, EventMetadata, evolve } from '../src';

let counter = 0;
export const meta = (operation = 'Test'): EventMetadata => ({
  transactionId: `tx-${++counter}`,
  operation,
  occurredAt: '2026-01-01T00:00:00.000Z',
});

/** Folds events into a fresh state, one transaction per call of `then`. */
export function stateOf(...events: CatalogEvent[]): CatalogState {
  return fold(new CatalogState(), events);
}

export function fold(state: CatalogState, events: CatalogEvent[], metadata = meta()): CatalogState {
  for (const event of events) {
    state.revision++;
    evolve(state, { event, metadata, revision: state.revision });
  }
  return state;
}

export function expectCode(work: () => unknown, code: ErrorCode, message?: RegExp): void {
  let error: unknown;
  try {
    work();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(CatalogError);
  expect((error as CatalogError).code).toBe(code);
  if (message) expect((error as CatalogError).message).toMatch(message);
}

export const ns = (...namespace: string[]): CatalogEvent => ({ type: 'NamespaceCreated', data: { namespace, properties: {} } });
export const declared = (id: string[], uuid = `u-${id.join('-')}`, managedVersioning = true): CatalogEvent => ({
  type: 'TableDeclared',
  data: { table: id, tableUuid: uuid, location: `/wh/default/${id.join('/')}-${uuid}.lance`, properties: {}, managedVersioning },
});
export const version = (id: string[], v: number, uuid = `u-${id.join('-')}`, branch?: string): CatalogEvent => ({
  type: 'TableVersionCreated',
  data: {
    table: id,
    tableUuid: uuid,
    version: v,
    manifestPath: `wh/x/_versions/${v}.manifest`,
    namingScheme: 'V1',
    timestampMillis: 1,
    ...(branch !== undefined ? { branch } : {}),
  },
});
/** A branch made with CreateTableBranch (`from`: its parent branch, absent for main). */
export const branched = (id: string[], branch: string, parentVersion: number, from?: string): CatalogEvent => ({
  type: 'TableBranchCreated',
  data: { table: id, tableUuid: `u-${id.join('-')}`, branch, ...(from !== undefined ? { parentBranch: from } : {}), parentVersion, createdAtMillis: 7, recordedBy: 'CreateTableBranch' },
});

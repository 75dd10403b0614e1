import { AlterTransactionAction, CatalogState, DraftCatalog, ErrorCode, TRANSACTION_STATUSES, TransactionStatus, checkTransition, decideAlterTransaction, evolve, parseTransactionStatus, subscriptionTakes } from '../src';
import { declared, expectCode, fold, stateOf, meta, ns } from './support';

const withTransaction = (status: TransactionStatus) => {
  const state = stateOf();
  const metadata = meta('CreateTableIndex');
  fold(state, [ns('a')], metadata);
  if (status !== 'Succeeded') {
    state.revision++;
    evolve(state, {
      event: { type: 'TransactionAltered', data: { transactionId: metadata.transactionId, status, setProperties: {}, unsetProperties: [] } },
      metadata,
      revision: state.revision,
    });
  }
  return { state, id: metadata.transactionId };
};

describe('transactions', () => {
  it("keeps the table a job's transaction works on, through a snapshot's image, and names it in every change of the job", () => {
    const state = stateOf();
    const setUp = meta('DeclareTable');
    fold(state, [ns('a'), declared(['a', 't'])], setUp);
    const request = meta('CreateTableIndex');
    fold(state, [{ type: 'TableIndexRequested', data: { table: ['a', 't'], tableUuid: 'u-a-t', indexName: 'v_idx', columns: ['v'], indexType: 'IVF_PQ', params: {} } }], request);
    const back = CatalogState.fromImage(state.toImage());
    for (const view of [state, back]) {
      expect(view.transaction(request.transactionId)).toMatchObject({ status: 'Queued', table: ['a', 't'] });
      const [altered] = decideAlterTransaction(view, request.transactionId, [{ kind: 'setStatus', status: 'Running' }]);
      expect(altered).toMatchObject({ type: 'TransactionAltered', data: { transactionId: request.transactionId, status: 'Running', table: ['a', 't'] } });
      // A namespace's webhook subscription takes the job's progress; another namespace's does not.
      expect(subscriptionTakes({ subscriptionId: 's', url: 'https://x/', namespace: ['a'] }, altered)).toBe(true);
      expect(subscriptionTakes({ subscriptionId: 's', url: 'https://x/', namespace: ['b'] }, altered)).toBe(false);
    }
    // A transaction that is no job names no table.
    const [plain] = decideAlterTransaction(state, setUp.transactionId, [{ kind: 'setProperty', key: 'k', value: 'v', mode: 'Overwrite' }]);
    expect(plain.data).not.toHaveProperty('table');
  });

  it("moves a job's transaction with its table when the table is renamed, in the state and in a draft over it", () => {
    const state = stateOf();
    fold(state, [ns('a'), ns('b'), declared(['a', 't']), declared(['a', 'other'])], meta('DeclareTable'));
    const request = meta('CreateTableIndex');
    fold(state, [{ type: 'TableIndexRequested', data: { table: ['a', 't'], tableUuid: 'u-a-t', indexName: 'v_idx', columns: ['v'], indexType: 'IVF_PQ', params: {} } }], request);
    const elsewhere = meta('CreateTableIndex');
    fold(state, [{ type: 'TableIndexRequested', data: { table: ['a', 'other'], tableUuid: 'u-a-other', indexName: 'v_idx', columns: ['v'], indexType: 'IVF_PQ', params: {} } }], elsewhere);
    const renamed = { type: 'TableRenamed' as const, data: { table: ['a', 't'], tableUuid: 'u-a-t', newTable: ['b', 'u'] } };

    const draft = new DraftCatalog(state);
    evolve(draft, { event: renamed, metadata: meta('RenameTable'), revision: state.revision + 1 });
    expect(draft.transaction(request.transactionId)).toMatchObject({ table: ['b', 'u'] });
    expect(draft.transactionsOfTable(['b', 'u'])).toEqual([request.transactionId]);
    expect(draft.transactionsOfTable(['a', 't'])).toEqual([]);
    // The draft left its base as it was.
    expect(state.transaction(request.transactionId)).toMatchObject({ table: ['a', 't'] });

    fold(state, [renamed], meta('RenameTable'));
    for (const view of [state, CatalogState.fromImage(state.toImage())]) {
      expect(view.transaction(request.transactionId)).toMatchObject({ status: 'Queued', table: ['b', 'u'] });
      expect(view.transaction(elsewhere.transactionId)).toMatchObject({ table: ['a', 'other'] });
      const [altered] = decideAlterTransaction(view, request.transactionId, [{ kind: 'setStatus', status: 'Running' }]);
      expect(altered.data).toMatchObject({ table: ['b', 'u'] });
      expect(subscriptionTakes({ subscriptionId: 's', url: 'https://x/', namespace: ['b'] }, altered)).toBe(true);
      expect(subscriptionTakes({ subscriptionId: 's', url: 'https://x/', namespace: ['a'] }, altered)).toBe(false);
    }
  });

  it('records every command as a Succeeded transaction with its operation', () => {
    const { state, id } = withTransaction('Succeeded');
    expect(state.transaction(id)).toMatchObject({ status: 'Succeeded', operation: 'CreateTableIndex', properties: { operation: 'CreateTableIndex' } });
  });

  const allowed: Array<[TransactionStatus, TransactionStatus]> = [
    ['Queued', 'Running'],
    ['Queued', 'Canceled'],
    ['Queued', 'Failed'],
    ['Running', 'Succeeded'],
    ['Running', 'Failed'],
    ['Running', 'Canceled'],
  ];
  it.each(allowed)('allows %s → %s', (from, to) => {
    expect(() => checkTransition('t', from, to)).not.toThrow();
  });

  const refused = TRANSACTION_STATUSES.flatMap((from) => TRANSACTION_STATUSES.map((to) => [from, to] as [TransactionStatus, TransactionStatus])).filter(
    ([from, to]) => from !== to && !allowed.some(([f, t]) => f === from && t === to),
  );
  it.each(refused)('refuses %s → %s with code 19', (from, to) => {
    expectCode(() => checkTransition('t', from, to), ErrorCode.InvalidTableState);
  });

  it('refuses any status on a final transaction, even the same one', () => {
    for (const final of ['Succeeded', 'Failed', 'Canceled'] as const) {
      expectCode(() => checkTransition('t', final, final), ErrorCode.InvalidTableState, /final/);
    }
  });

  it('applies a list of actions in order, as one event', () => {
    const { state, id } = withTransaction('Queued');
    const actions: AlterTransactionAction[] = [
      { kind: 'setStatus', status: 'Running' },
      { kind: 'setProperty', key: 'a', value: '1', mode: 'Overwrite' },
      { kind: 'setProperty', key: 'a', value: '2', mode: 'Skip' },
      { kind: 'setProperty', key: 'b', value: '1', mode: 'Overwrite' },
      { kind: 'unsetProperty', key: 'b', mode: 'Fail' },
      { kind: 'unsetProperty', key: 'missing', mode: 'Skip' },
      { kind: 'setStatus', status: 'Canceled' },
    ];
    const events = decideAlterTransaction(state, id, actions);
    expect(events).toEqual([
      { type: 'TransactionAltered', data: { transactionId: id, status: 'Canceled', setProperties: { a: '1' }, unsetProperties: ['b'] } },
    ]);
    fold(state, events);
    expect(state.transaction(id)).toMatchObject({ status: 'Canceled', properties: { a: '1', operation: 'CreateTableIndex' } });
  });

  it.each([
    ['a status the transaction cannot move to after actions that would apply', [{ kind: 'setProperty', key: 'x', value: '1', mode: 'Overwrite' }, { kind: 'setStatus', status: 'Queued' }], ErrorCode.InvalidTableState],
    ['setting a property that exists in Fail mode', [{ kind: 'setProperty', key: 'operation', value: 'x', mode: 'Fail' }], ErrorCode.InvalidInput],
    ['unsetting a missing property in Fail mode', [{ kind: 'unsetProperty', key: 'nope', mode: 'Fail' }], ErrorCode.InvalidInput],
    ['an empty list of actions', [], ErrorCode.InvalidInput],
  ] as Array<[string, AlterTransactionAction[], ErrorCode]>)('applies none of the actions for %s', (_what, actions, code) => {
    const { state, id } = withTransaction('Running');
    expectCode(() => decideAlterTransaction(state, id, actions), code);
    expect(state.transaction(id)!.status).toBe('Running');
    expect(state.transaction(id)!.properties.x).toBeUndefined();
  });

  it('refuses a transaction that does not exist', () => {
    const { state } = withTransaction('Running');
    expectCode(() => decideAlterTransaction(state, 'unknown', [{ kind: 'setStatus', status: 'Failed' }]), ErrorCode.TransactionNotFound);
  });

  it('records nothing for a list that changes nothing', () => {
    const { state, id } = withTransaction('Running');
    expect(decideAlterTransaction(state, id, [{ kind: 'setStatus', status: 'Running' }, { kind: 'unsetProperty', key: 'zz', mode: 'Skip' }])).toEqual([]);
  });

  it('refuses reserved keys, reads inherited names as ordinary keys, and bounds the properties an alter leaves', () => {
    const { state, id } = withTransaction('Running');
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      expectCode(() => decideAlterTransaction(state, id, [{ kind: 'setProperty', key, value: 'x', mode: 'Overwrite' }]), ErrorCode.InvalidInput, /reserved/);
    }
    expect(decideAlterTransaction(state, id, [{ kind: 'setProperty', key: 'toString', value: 'x', mode: 'Fail' }])).toHaveLength(1);
    const have = Object.keys(state.transaction(id)!.properties).length;
    const limits = { maxCount: have + 2, maxBytes: 1000 };
    const set = (keys: string[], value = 'v'): AlterTransactionAction[] => keys.map((key) => ({ kind: 'setProperty', key, value, mode: 'Overwrite' }));
    expect(decideAlterTransaction(state, id, set(['a', 'b']), limits)).toHaveLength(1);
    expectCode(() => decideAlterTransaction(state, id, set(['a', 'b', 'c']), limits), ErrorCode.InvalidInput, /would hold \d+ entries; at most \d+ are allowed \(PROPERTIES_MAX_COUNT\)/);
    expectCode(() => decideAlterTransaction(state, id, set(['a'], 'x'.repeat(1000)), limits), ErrorCode.InvalidInput, /PROPERTIES_MAX_BYTES/);
    // A transaction already past the limits (workers record their own properties) may still shrink or change in place.
    fold(state, decideAlterTransaction(state, id, set(['a', 'b', 'c', 'd'])));
    expect(decideAlterTransaction(state, id, [{ kind: 'unsetProperty', key: 'a', mode: 'Fail' }, ...set(['b'], 'w')], limits)).toHaveLength(1);
  });

  it('reads statuses case-insensitively, in PascalCase or snake_case', () => {
    expect(parseTransactionStatus('canceled')).toBe('Canceled');
    expect(parseTransactionStatus('RUNNING')).toBe('Running');
    expect(parseTransactionStatus('Succeeded')).toBe('Succeeded');
    expectCode(() => parseTransactionStatus('done'), ErrorCode.InvalidInput);
    expectCode(() => parseTransactionStatus(undefined), ErrorCode.InvalidInput);
  });
});

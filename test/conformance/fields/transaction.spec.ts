/** The fields of DescribeTransaction and AlterTransaction (see coverage.ts for the tokens). */
import { NS, T, TX, createTable, expectError, ok, revision, rows, suiteServer } from './fixtures';
import { covers } from './coverage';

describe('transaction operations, field by field', () => {
  // The API alone: a build it queues stays Queued, as no worker takes it.
  const s = suiteServer({ entry: 'api' });
  const api = () => s.api;
  let created = '';

  beforeAll(async () => {
    await ok(api().post(`${NS('x')}/create`, {}));
    created = (await createTable(api(), ['x', 't'], rows(0, 3))).transaction_id;
  });

  const describe_ = async (id: string) => (await ok(api().post(`${TX(id)}/describe`, {}))).body;

  covers(['DescribeTransaction#200'], 'answers the status and properties of a transaction an answer named', async () => {
    expect(await describe_(created)).toEqual({ status: 'Succeeded', properties: { operation: 'CreateTable', started_at: expect.any(String) } });
    const build = (await ok(api().post(`${T('x', 't')}/create_index`, { column: 'id', index_type: 'BTREE' }))).body.transaction_id;
    expect(await describe_(build)).toMatchObject({ status: 'Queued', properties: { operation: 'CreateTableIndex' } });
  });

  covers(['AlterTransaction#200', 'AlterTransaction.actions', 'AlterTransaction.actions.setStatusAction'], 'sets the status: a queued build canceled is Canceled, and so is its index', async () => {
    const build = (await ok(api().post(`${T('x', 't')}/create_index`, { column: 'score', index_type: 'BTREE', name: 'to_cancel' }))).body.transaction_id;
    const altered = (await ok(api().post(`${TX(build)}/alter`, { actions: [{ setStatusAction: { status: 'Canceled' } }] }))).body;
    expect(altered).toMatchObject({ status: 'Canceled', properties: { operation: 'CreateTableIndex' } });
    expect((await describe_(build)).status).toBe('Canceled');
    const indexes = (await ok(api().post(`${T('x', 't')}/index/list`, {}))).body.indexes;
    expect(indexes.find((i: { index_name: string }) => i.index_name === 'to_cancel')).toMatchObject({ status: 'canceled' });
  });

  covers(['AlterTransaction#409'], 'a final status cannot change: 409 code 19, and nothing is applied', async () => {
    const before = await revision(api());
    expectError(await api().post(`${TX(created)}/alter`, { actions: [{ setPropertyAction: { key: 'note', value: 'x' } }, { setStatusAction: { status: 'Running' } }] }), 409, 19);
    expect(await revision(api())).toBe(before);
    expect((await describe_(created)).properties).not.toHaveProperty('note');
  });

  covers(['AlterTransaction.actions.setPropertyAction', 'AlterTransaction.actions.unsetPropertyAction'], 'sets and unsets properties with their modes, all or nothing; properties the server wrote stay its own (403 code 15)', async () => {
    const alter = (...actions: object[]) => api().post(`${TX(created)}/alter`, { actions });
    expect((await ok(alter({ setPropertyAction: { key: 'owner', value: 'ana' } }, { setPropertyAction: { key: 'ticket', value: 'T-1' } }))).body.properties).toMatchObject({ owner: 'ana', ticket: 'T-1' });
    // Overwrite (the default) replaces, Skip keeps, Fail refuses the whole request.
    expect((await ok(alter({ setPropertyAction: { key: 'owner', value: 'bo' } }))).body.properties.owner).toBe('bo');
    expect((await ok(alter({ setPropertyAction: { key: 'owner', value: 'cy', mode: 'Skip' } }))).body.properties.owner).toBe('bo');
    expectError(await alter({ setPropertyAction: { key: 'extra', value: '1' } }, { setPropertyAction: { key: 'owner', value: 'dee', mode: 'fail' } }), 400, 13);
    expect((await describe_(created)).properties).toMatchObject({ owner: 'bo' });
    expect((await describe_(created)).properties).not.toHaveProperty('extra');
    // Unset: a missing key is skipped by default, refused with Fail.
    expect((await ok(alter({ unsetPropertyAction: { key: 'ticket' } }, { unsetPropertyAction: { key: 'never-set' } }))).body.properties).not.toHaveProperty('ticket');
    expectError(await alter({ unsetPropertyAction: { key: 'owner' } }, { unsetPropertyAction: { key: 'never-set', mode: 'Fail' } }), 400, 13);
    expect((await describe_(created)).properties.owner).toBe('bo');
    expectError(await alter({ setPropertyAction: { key: 'operation', value: 'Forged' } }), 403, 15);
    expectError(await alter({ unsetPropertyAction: { key: 'started_at' } }), 403, 15);
  });
});

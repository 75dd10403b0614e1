import { CatalogError, ErrorCode } from '@app/catalog';
import { retryingConflicts } from '../src/conflict-retry';

const conflict = () => new CatalogError(ErrorCode.ConcurrentModification, 'inserting failed: another writer changed the table meanwhile; retry');
const quick = { attempts: 3, withinMs: 5_000, firstPauseMs: 5 };

/** A write that fails with the given errors in turn, then answers its attempt number. */
function failing(errors: Error[]) {
  let calls = 0;
  const write = async () => {
    calls++;
    if (calls <= errors.length) throw errors[calls - 1];
    return calls;
  };
  return { write, calls: () => calls };
}

describe('an insert that lost its commit races', () => {
  it('is written again, and answered by the attempt that committed', async () => {
    const w = failing([conflict(), conflict()]);
    await expect(retryingConflicts('inserting failed', w.write, () => false, quick)).resolves.toBe(3);
  });

  it('answers "unavailable, retry later" once its attempts are spent, having written nothing', async () => {
    const w = failing([conflict(), conflict(), conflict(), conflict()]);
    await expect(retryingConflicts('inserting failed', w.write, () => false, quick)).rejects.toMatchObject({
      code: ErrorCode.ServiceUnavailable,
      message: expect.stringMatching(/^inserting failed: other writers kept changing the table \(3 attempts over \d+ s\); nothing was written, retry later$/),
    });
    expect(w.calls()).toBe(3);
  });

  it('is not tried again after its time is spent', async () => {
    const w = failing([conflict(), conflict()]);
    await expect(retryingConflicts('inserting failed', w.write, () => false, { attempts: 5, withinMs: 1, firstPauseMs: 50 })).rejects.toMatchObject({
      code: ErrorCode.ServiceUnavailable,
      message: expect.stringContaining('(1 attempt over 0 s)'),
    });
    expect(w.calls()).toBe(1);
  });

  it('is not written twice when a commit of it was recorded after all', async () => {
    const w = failing([conflict()]);
    await expect(retryingConflicts('inserting failed', w.write, () => true, quick)).rejects.toMatchObject({ code: ErrorCode.ConcurrentModification });
    expect(w.calls()).toBe(1);
  });

  it('gives any other failure back at once', async () => {
    for (const error of [new CatalogError(ErrorCode.ServiceUnavailable, 'retry later'), new CatalogError(ErrorCode.InvalidInput, 'bad rows'), new Error('crashed')]) {
      const w = failing([error]);
      await expect(retryingConflicts('inserting failed', w.write, () => false, quick)).rejects.toBe(error);
      expect(w.calls()).toBe(1);
    }
  });
});

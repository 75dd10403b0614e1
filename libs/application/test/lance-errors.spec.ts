import { CatalogError, ErrorCode } from '@app/catalog';
import { EventStoreUnavailableError } from '@app/event-store';
import { StorageUnavailableError } from '@app/storage';
import { jobFailure } from '../src/job-failures';
import { lanceInputError } from '../src/lance-errors';

const codeOf = (e: unknown) => (e as CatalogError).code;

describe('Lance errors as catalog errors', () => {
  it('answers a commit Lance gave up on against concurrent writers as ConcurrentModification', () => {
    const e = new Error('lance error: Commit conflict for version 7: Failed to commit the transaction after 20 retries.');
    expect(codeOf(lanceInputError(e, 'inserting failed', true))).toBe(ErrorCode.ConcurrentModification);
  });

  it('answers data that does not fit as a schema error on writes only, and other refusals as bad input', () => {
    const e = new Error('lance error: Append with different schema: field `other` not found in the table');
    expect(codeOf(lanceInputError(e, 'inserting failed', true))).toBe(ErrorCode.TableSchemaValidationError);
    expect(codeOf(lanceInputError(new Error('Invalid user input: no column named x'), 'counting failed'))).toBe(ErrorCode.InvalidInput);
  });
});

describe("what a job's failed attempt means", () => {
  it('waits for a catalog API, an event store or an object store that cannot be reached', () => {
    const unreachableApi = new Error('lance error: Namespace error: error sending request for url (http://127.0.0.1:9/v1/table/t/describe): tcp connect error: Connection refused');
    expect(jobFailure(unreachableApi, 'building the index')).toEqual({ kind: 'unavailable', reason: expect.stringContaining('the catalog API is unreachable') });
    expect(jobFailure(new EventStoreUnavailableError('postgresql://x: connect ECONNREFUSED'), 'x')).toEqual({ kind: 'unavailable', reason: 'the event store is unavailable' });
    expect(jobFailure(new StorageUnavailableError('the object store is unavailable (reading s3://b/k): socket hang up'), 'x').kind).toBe('unavailable');
    expect(jobFailure(new CatalogError(ErrorCode.ServiceUnavailable, 'the event store is unavailable; retry later'), 'x').kind).toBe('unavailable');
  });

  it('leaves a commit lost to concurrent writers to another attempt, and refuses everything else at once', () => {
    expect(jobFailure(new Error('lance error: Commit conflict for version 7'), 'x').kind).toBe('conflict');
    const kmeans = new Error('lance error: Index error: KMeans: can not train 1000 centroids with 300 vectors, choose a smaller K (< 300) instead');
    expect(jobFailure(kmeans, 'building the index')).toEqual({ kind: 'refused', error: expect.objectContaining({ code: ErrorCode.InvalidInput }) });
    expect(jobFailure(new CatalogError(ErrorCode.InvalidTableState, 'the table is declared but holds no data yet'), 'x').kind).toBe('refused');
    expect(jobFailure(new TypeError('cannot read properties of undefined'), 'x').kind).toBe('refused');
  });
});

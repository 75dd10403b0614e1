import { CatalogError, ErrorCode } from '@app/catalog';
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

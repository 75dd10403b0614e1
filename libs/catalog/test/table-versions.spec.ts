import { TableVersions, VersionSet, finalManifestName } from '../src';

const LOCATION = 'wh/default/a/t.lance';
const record = (version: number) => ({ version, manifestPath: `${LOCATION}/_versions/${finalManifestName(version, 'V2')}`, namingScheme: 'V2' as const, timestampMillis: version });

/** What a page of `range` must hold, from the whole ordered list. */
function expected(all: number[], after: number | undefined, count: number | undefined, descending: boolean): number[] {
  const ordered = descending ? [...all].sort((a, b) => b - a) : [...all].sort((a, b) => a - b);
  const past = ordered.filter((v) => after === undefined || (descending ? v < after : v > after));
  return count === undefined ? past : past.slice(0, count);
}

function rangesOf(set: VersionSet, all: number[]): void {
  for (const descending of [false, true]) {
    for (const after of [undefined, 0, 1, 3, 4, 8, 12, 15, 16, 40]) {
      for (const count of [undefined, 0, 1, 2, 5, 100]) {
        expect({ after, count, descending, range: set.range(after, count, descending) }).toEqual({ after, count, descending, range: expected(all, after, count, descending) });
      }
    }
  }
}

describe('a page of a table\'s version numbers', () => {
  const kept = [1, 2, 4, 5, 9, 10, 11, 15];

  it('is the versions past the token, in either order, at most as many as asked', () => {
    const set = new TableVersions(LOCATION);
    for (const v of kept) set.add(record(v));
    rangesOf(set, kept);
    expect(new TableVersions(LOCATION).range(undefined, 3, true)).toEqual([]);
  });

  it('is the same over a draft that adds and deletes versions, and leaves its base as it was', () => {
    const base = new TableVersions(LOCATION);
    for (const v of kept) base.add(record(v));
    const draft = base.draft();
    draft.delete(15);
    draft.delete(4);
    draft.add(record(3));
    draft.add(record(16));
    rangesOf(draft, [1, 2, 3, 5, 9, 10, 11, 16]);
    rangesOf(base, kept);
  });
});

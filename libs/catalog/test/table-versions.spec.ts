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

  it('deletes many versions at once as one at a time would, keeping the records of the rest whole', () => {
    const build = () => {
      const set = new TableVersions(LOCATION);
      for (let v = 1; v <= 40; v++) set.add(v % 7 === 0 ? { ...record(v), manifestPath: `elsewhere/${v}.manifest`, eTag: `e${v}`, metadata: { k: String(v) } } : record(v));
      return set;
    };
    const doomed = [40, 1, 2, 3, 7, 14, 15, 22, 99, 3];
    const one = build();
    const expectedCount = new Set(doomed.filter((v) => one.has(v))).size;
    for (const v of doomed) one.delete(v);
    const many = build();
    expect(many.deleteMany(doomed)).toBe(expectedCount);
    expect(many.keys()).toEqual(one.keys());
    expect(many.values()).toEqual(one.values());
    expect(many.latest()).toBe(39);
    expect(many.get(21)).toEqual({ ...record(21), manifestPath: 'elsewhere/21.manifest', eTag: 'e21', metadata: { k: '21' } });
    expect(many.deleteMany([])).toBe(0);
    // Added again after a delete, a version comes back without the extras it had.
    many.add(record(14));
    expect(many.get(14)).toEqual(record(14));
    const left = many.size;
    expect(left).toBe(40 - expectedCount + 1);
    expect(many.deleteMany(many.keys())).toBe(left);
    expect([many.size, many.latest()]).toEqual([0, undefined]);

    const base = build();
    const draft = base.draft();
    expect(draft.deleteMany(doomed)).toBe(expectedCount);
    expect(draft.keys()).toEqual(one.keys());
    expect(base.size).toBe(40);
  });
});


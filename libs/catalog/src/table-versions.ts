import { Properties, VersionRecord } from './events';
import { finalManifestName, versionsDirOf } from './dataset-layout';

/** A table's committed versions, ordered by version number. */
export interface VersionSet {
  readonly size: number;
  has(version: number): boolean;
  /** A fresh record each call: changing it changes nothing in the set. */
  get(version: number): VersionRecord | undefined;
  /** Version numbers, ascending. */
  keys(): number[];
  /**
   * Up to `count` version numbers (all, when undefined) past `after` (from the first, when
   * undefined), ascending or descending: a page without a look at the versions outside it.
   */
  range(after: number | undefined, count: number | undefined, descending: boolean): number[];
  latest(): number | undefined;
  /** Every record, ascending. */
  values(): VersionRecord[];
  add(record: VersionRecord): void;
  delete(version: number): boolean;
  /** Deletes every version listed that the set holds; answers how many it deleted. */
  deleteMany(versions: readonly number[]): number;
  /** A copy-on-write layer over this set: its changes never reach the set, and making one costs O(1). */
  draft(): VersionSet;
}

/** Per version: version, timestampMillis, manifestSize (NaN when absent), flags. */
const FIELDS = 4;
const V2 = 1;
/** The manifest path is the one the table's location and the version give: it is not stored. */
const DERIVED_PATH = 2;

/** What most records do not have, kept aside so the common record costs only its four numbers. */
export interface VersionExtras {
  manifestPath?: string;
  eTag?: string;
  metadata?: Properties;
  stagingManifest?: { path: string; eTag?: string };
}

/**
 * The versions of one table in one flat array of numbers (V8 keeps it unboxed), instead of an
 * object, a path string and a map entry per version: a catalog holds millions of them.
 */
export class TableVersions implements VersionSet {
  private readonly cols: number[] = [];
  private extras?: Map<number, VersionExtras>;
  private readonly dir: string;

  constructor(location: string) {
    this.dir = versionsDirOf(location);
  }

  /** A set from what `copyNumbersInto` and `extrasList` gave. */
  static restore(location: string, numbers: ArrayLike<number>, extras: ReadonlyArray<[number, VersionExtras]>): TableVersions {
    const versions = new TableVersions(location);
    for (let i = 0; i < numbers.length; i++) versions.cols.push(numbers[i]);
    if (extras.length) versions.extras = new Map(extras);
    return versions;
  }

  /** Writes this set's numbers at `at` and returns how many it wrote (FIELDS per version). */
  copyNumbersInto(target: Float64Array, at: number): number {
    for (let i = 0; i < this.cols.length; i++) target[at + i] = this.cols[i];
    return this.cols.length;
  }

  extrasList(): Array<[number, VersionExtras]> {
    return this.extras ? [...this.extras] : [];
  }

  get size(): number {
    return this.cols.length / FIELDS;
  }

  has(version: number): boolean {
    return this.indexOf(version) >= 0;
  }

  get(version: number): VersionRecord | undefined {
    const i = this.indexOf(version);
    return i < 0 ? undefined : this.recordAt(i);
  }

  keys(): number[] {
    const keys = new Array<number>(this.size);
    for (let i = 0; i < keys.length; i++) keys[i] = this.cols[i * FIELDS];
    return keys;
  }

  latest(): number | undefined {
    return this.cols.length ? this.cols[this.cols.length - FIELDS] : undefined;
  }

  range(after: number | undefined, count: number | undefined, descending: boolean): number[] {
    const out: number[] = [];
    const room = count ?? Infinity;
    if (descending) {
      for (let i = (after === undefined ? this.size : this.lowerBound(after)) - 1; i >= 0 && out.length < room; i--) out.push(this.cols[i * FIELDS]);
    } else {
      for (let i = after === undefined ? 0 : this.lowerBound(Math.floor(after) + 1); i < this.size && out.length < room; i++) out.push(this.cols[i * FIELDS]);
    }
    return out;
  }

  values(): VersionRecord[] {
    const records = new Array<VersionRecord>(this.size);
    for (let i = 0; i < records.length; i++) records[i] = this.recordAt(i);
    return records;
  }

  add(record: VersionRecord): void {
    const { version } = record;
    const derived = isDerivedPath(record.manifestPath, this.dir, finalManifestName(version, record.namingScheme));
    let extras: VersionExtras | undefined = derived ? undefined : { manifestPath: record.manifestPath };
    if (record.eTag !== undefined) (extras ??= {}).eTag = record.eTag;
    if (record.metadata !== undefined) (extras ??= {}).metadata = record.metadata;
    if (record.stagingManifest !== undefined) (extras ??= {}).stagingManifest = record.stagingManifest;
    this.forgetStagingBefore(version);
    const flags = (record.namingScheme === 'V2' ? V2 : 0) | (derived ? DERIVED_PATH : 0);
    const size = record.manifestSize === undefined ? NaN : record.manifestSize;
    const at = this.lowerBound(version);
    if (at < this.size && this.cols[at * FIELDS] === version) {
      this.cols[at * FIELDS + 1] = record.timestampMillis;
      this.cols[at * FIELDS + 2] = size;
      this.cols[at * FIELDS + 3] = flags;
    } else if (at === this.size) {
      this.cols.push(version, record.timestampMillis, size, flags);
    } else {
      this.cols.splice(at * FIELDS, 0, version, record.timestampMillis, size, flags);
    }
    if (extras) (this.extras ??= new Map()).set(version, extras);
    else this.extras?.delete(version);
  }

  /**
   * Only the newest version keeps the staging manifest its final one is made from, if its committing
   * process ended first: a later commit was built on what the client read of it, so it was made
   * (served, the catalog makes it). A catalog of millions of versions keeps one per table.
   */
  private forgetStagingBefore(version: number): void {
    const latest = this.latest();
    if (latest === undefined || latest >= version) return;
    const extras = this.extras?.get(latest);
    if (!extras?.stagingManifest) return;
    const { stagingManifest: _forgotten, ...rest } = extras;
    if (Object.keys(rest).length) this.extras!.set(latest, rest);
    else this.extras!.delete(latest);
  }

  delete(version: number): boolean {
    const i = this.indexOf(version);
    if (i < 0) return false;
    this.cols.splice(i * FIELDS, FIELDS);
    this.extras?.delete(version);
    return true;
  }

  /**
   * One pass over the set, however many go: an expiry records thousands of versions deleted in one
   * event, and deleting them one at a time moved the rest of the array each time (100,000
   * versions, all but ten deleted: 3.8 s of a fold).
   */
  deleteMany(versions: readonly number[]): number {
    const doomed = new Set(versions);
    const n = this.size;
    let kept = 0;
    for (let i = 0; i < n; i++) {
      const at = i * FIELDS;
      const version = this.cols[at];
      if (doomed.has(version)) {
        this.extras?.delete(version);
        continue;
      }
      if (kept !== i) for (let f = 0; f < FIELDS; f++) this.cols[kept * FIELDS + f] = this.cols[at + f];
      kept++;
    }
    this.cols.length = kept * FIELDS;
    return n - kept;
  }

  draft(): VersionSet {
    return new DraftVersions(this);
  }

  private recordAt(i: number): VersionRecord {
    const at = i * FIELDS;
    const version = this.cols[at];
    const flags = this.cols[at + 3];
    const namingScheme = flags & V2 ? 'V2' : 'V1';
    const extras = this.extras?.get(version);
    // The order of the fields is the order decideCreateTableVersion writes them in.
    const record: VersionRecord = {
      version,
      manifestPath: flags & DERIVED_PATH ? this.dir + finalManifestName(version, namingScheme) : extras!.manifestPath!,
      namingScheme,
      timestampMillis: this.cols[at + 1],
    };
    const size = this.cols[at + 2];
    if (!Number.isNaN(size)) record.manifestSize = size;
    if (extras?.eTag !== undefined) record.eTag = extras.eTag;
    if (extras?.metadata !== undefined) record.metadata = extras.metadata;
    if (extras?.stagingManifest !== undefined) record.stagingManifest = extras.stagingManifest;
    return record;
  }

  private indexOf(version: number): number {
    const i = this.lowerBound(version);
    return i < this.size && this.cols[i * FIELDS] === version ? i : -1;
  }

  private lowerBound(version: number): number {
    // Commits come in order, so the common question is about the newest version.
    const n = this.size;
    if (n === 0 || this.cols[(n - 1) * FIELDS] < version) return n;
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cols[mid * FIELDS] < version) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

function isDerivedPath(path: string, dir: string, name: string): boolean {
  // Compared in place: concatenating first would build a string for every version folded.
  return path.length === dir.length + name.length && path.startsWith(dir) && path.endsWith(name);
}

/** Changes over a base set that is never written: what a draft catalog gives a table it changes. */
class DraftVersions implements VersionSet {
  private readonly changed = new Map<number, VersionRecord | null>();
  private count: number;

  constructor(private readonly base: VersionSet) {
    this.count = base.size;
  }

  get size(): number {
    return this.count;
  }

  has(version: number): boolean {
    const own = this.changed.get(version);
    return own === undefined ? this.base.has(version) : own !== null;
  }

  get(version: number): VersionRecord | undefined {
    const own = this.changed.get(version);
    if (own === undefined) return this.base.get(version);
    return own === null ? undefined : { ...own };
  }

  keys(): number[] {
    const keys = this.base.keys().filter((v) => !this.changed.has(v));
    for (const [v, record] of this.changed) if (record) keys.push(v);
    return keys.sort((a, b) => a - b);
  }

  range(after: number | undefined, count: number | undefined, descending: boolean): number[] {
    const ordered = descending ? this.keys().reverse() : this.keys();
    const past = ordered.filter((v) => after === undefined || (descending ? v < after : v > after));
    return count === undefined ? past : past.slice(0, count);
  }

  latest(): number | undefined {
    let latest = this.base.latest();
    if (latest !== undefined && this.changed.get(latest) === null) {
      const keys = this.keys();
      return keys[keys.length - 1];
    }
    for (const [v, record] of this.changed) if (record && (latest === undefined || v > latest)) latest = v;
    return latest;
  }

  values(): VersionRecord[] {
    return this.keys().map((v) => this.get(v)!);
  }

  add(record: VersionRecord): void {
    if (!this.has(record.version)) this.count++;
    this.changed.set(record.version, record);
  }

  delete(version: number): boolean {
    if (!this.has(version)) return false;
    this.count--;
    this.changed.set(version, null);
    return true;
  }

  deleteMany(versions: readonly number[]): number {
    let deleted = 0;
    for (const version of versions) if (this.delete(version)) deleted++;
    return deleted;
  }

  draft(): VersionSet {
    return new DraftVersions(this);
  }
}

/**
 * Table locations compared as folders: a purge removes everything under a location, so two tables
 * must never share files, and neither may lie inside the other's folder. Comparisons are by whole
 * path segments (`/a/b.lance` and `/a/b.lance2` are siblings), for local paths and `s3://` URIs alike.
 */

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;

/** A location as compared: repeated and trailing separators dropped (a URI's `scheme://` kept). */
export function locationKey(location: string): string {
  if (location === lastLocation) return lastKey;
  const scheme = SCHEME.exec(location)?.[0] ?? '';
  const path = location.slice(scheme.length);
  const key = /\/\/|\/$/.test(path) ? scheme + path.replace(/\/{2,}/g, '/').replace(/\/+$/, '') : location;
  // One decision asks about one location several times over.
  lastLocation = location;
  lastKey = key;
  return key;
}
let lastLocation = '';
let lastKey = '';

/** The folder holding a location key; none above a path's first folder or a URI's bucket. */
function parentKey(key: string): string | undefined {
  const i = key.lastIndexOf('/');
  if (i <= 0 || key[i - 1] === '/') return undefined;
  return key.slice(0, i);
}

/** Whether `inner` lies strictly inside the folder `outer`. */
export function liesInside(inner: string, outer: string): boolean {
  const i = locationKey(inner);
  const o = locationKey(outer);
  return i.length > o.length && i.charCodeAt(o.length) === 47 /* '/' */ && i.startsWith(o);
}

/** What a view of the catalog tells of the things (tables, pending purges) at locations. */
export interface LocationsView<T> {
  /** The thing at exactly this location. */
  at(location: string): T | undefined;
  /** The things at this location or at a folder holding it. */
  enclosing(location: string): T[];
  /** Whether anything lies strictly inside this location. */
  hasInside(location: string): boolean;
  /** The things strictly inside this location: a scan, for the few answers that must name them. */
  inside(location: string): T[];
}

/**
 * Things by location, with every folder that holds one: "is anything inside X" is one lookup and
 * "is X inside anything" one lookup per parent folder, whatever the number of tables. Each folder
 * counts the entries and folders directly in it, so adding or removing a location next to others
 * touches one folder only.
 */
export class NestedLocations<T> implements LocationsView<T> {
  private readonly byKey = new Map<string, T>();
  private readonly folders = new Map<string, number>();

  add(location: string, value: T): void {
    const key = locationKey(location);
    const had = this.byKey.has(key);
    this.byKey.set(key, value);
    if (had) return;
    for (let child = key, parent = parentKey(child); parent !== undefined; child = parent, parent = parentKey(child)) {
      const held = this.folders.get(parent) ?? 0;
      this.folders.set(parent, held + 1);
      if (held > 0) return;
    }
  }

  /** Removes `value` from its location; another thing recorded there since stays. */
  remove(location: string, value: T): void {
    const key = locationKey(location);
    if (this.byKey.get(key) !== value) return;
    this.byKey.delete(key);
    for (let child = key, parent = parentKey(child); parent !== undefined; child = parent, parent = parentKey(child)) {
      const held = this.folders.get(parent)! - 1;
      if (held > 0) {
        this.folders.set(parent, held);
        return;
      }
      this.folders.delete(parent);
    }
  }

  at(location: string): T | undefined {
    return this.byKey.get(locationKey(location));
  }

  enclosing(location: string): T[] {
    const found: T[] = [];
    if (this.byKey.size === 0) return found;
    for (let key: string | undefined = locationKey(location); key !== undefined; key = parentKey(key)) {
      const value = this.byKey.get(key);
      if (value !== undefined) found.push(value);
    }
    return found;
  }

  hasInside(location: string): boolean {
    return this.folders.has(locationKey(location));
  }

  inside(location: string): T[] {
    if (!this.hasInside(location)) return [];
    const outer = locationKey(location);
    const found: T[] = [];
    for (const [key, value] of this.byKey) if (liesInside(key, outer)) found.push(value);
    return found;
  }
}

/** One entry a draft touched: the base's value before (if any) and the draft's own now (if any). */
export interface TouchedEntry<T> {
  original?: T;
  current?: T;
}

/**
 * A base's locations as a draft sees them: what the draft put there on top, without what it
 * removed or replaced. Built on the first question only (most drafts, a group of commits, never
 * ask one), then kept up to date with each change the draft makes.
 */
export class DraftLocations<T> implements LocationsView<T> {
  private layers?: {
    own: NestedLocations<T>;
    /** The base's entries the draft removed or replaced. */
    hidden: NestedLocations<T>;
  };

  constructor(
    private readonly base: LocationsView<T>,
    private readonly locationOf: (value: T) => string,
    /** Whether the draft left a base entry as it was. */
    private readonly untouched: (value: T) => boolean,
    /** Every entry the draft touched so far. */
    private readonly touched: () => Iterable<TouchedEntry<T>>,
  ) {}

  /** Whether changes must be told (once a question was asked). */
  get tracking(): boolean {
    return this.layers !== undefined;
  }

  /** The draft replaces one entry: `previous` is its own value before, `original` the base's when touched first. */
  replace(change: { previous?: T } & TouchedEntry<T>): void {
    const layers = this.layers;
    if (!layers) return;
    if (change.original !== undefined) layers.hidden.add(this.locationOf(change.original), change.original);
    if (change.previous !== undefined) layers.own.remove(this.locationOf(change.previous), change.previous);
    if (change.current !== undefined) layers.own.add(this.locationOf(change.current), change.current);
  }

  private get built() {
    if (!this.layers) {
      const layers = { own: new NestedLocations<T>(), hidden: new NestedLocations<T>() };
      for (const entry of this.touched()) {
        if (entry.original !== undefined) layers.hidden.add(this.locationOf(entry.original), entry.original);
        if (entry.current !== undefined) layers.own.add(this.locationOf(entry.current), entry.current);
      }
      this.layers = layers;
    }
    return this.layers;
  }

  at(location: string): T | undefined {
    const own = this.built.own.at(location);
    if (own !== undefined) return own;
    const base = this.base.at(location);
    return base !== undefined && this.untouched(base) ? base : undefined;
  }

  enclosing(location: string): T[] {
    return [...this.built.own.enclosing(location), ...this.base.enclosing(location).filter(this.untouched)];
  }

  hasInside(location: string): boolean {
    const { own, hidden } = this.built;
    if (own.hasInside(location)) return true;
    if (!this.base.hasInside(location)) return false;
    // Only when the draft removed something in there must the base's entries be looked at one by one.
    return !hidden.hasInside(location) || this.base.inside(location).some(this.untouched);
  }

  inside(location: string): T[] {
    return [...this.built.own.inside(location), ...this.base.inside(location).filter(this.untouched)];
  }
}

import { invalidInput } from './errors';
import { VersionRecord } from './events';
import { ObjectId, displayId } from './ids';
import { requireNamespace } from './namespace-commands';
import { Page, PageRequest, filterIter, takePage } from './pagination';
import { CatalogState } from './catalog-state';
import { CatalogView } from './catalog-view';
import { requireLine } from './table-line';
import { isOnlyDeclared, requireTable } from './table-commands';

/** `sees`: the namespaces the caller may see (absent: all). */
export function listNamespaces(view: CatalogView, id: ObjectId, page: PageRequest, sees?: (id: ObjectId) => boolean): Page<string> {
  requireNamespace(view, id);
  const names = view.childNamespaces(id).after(page.pageToken);
  return takePage(sees ? filterIter(names, (n) => sees([...id, n])) : names, page.limit, (n) => n);
}

/** `reads`: the tables the caller may read (absent: all). */
export function listTables(view: CatalogView, id: ObjectId, page: PageRequest, includeDeclared: boolean, reads?: (id: ObjectId) => boolean): Page<string> {
  requireNamespace(view, id);
  const all = view.childTables(id).after(page.pageToken);
  const names = reads ? filterIter(all, (n) => reads([...id, n])) : all;
  const kept = includeDeclared ? names : filterIter(names, (n) => !isOnlyDeclared(view.table([...id, n])!));
  return takePage(kept, page.limit, (n) => n);
}

/** Every table in every namespace, as full identifiers joined by the delimiter, in order. */
export function listAllTables(
  state: CatalogState,
  page: PageRequest,
  includeDeclared: boolean,
  delimiter: string,
  reads?: (id: ObjectId) => boolean,
): Page<string> {
  const all: string[] = [];
  for (const table of state.allTables()) {
    if (!includeDeclared && isOnlyDeclared(table)) continue;
    if (reads && !reads(table.id)) continue;
    const name = displayId(table.id, delimiter);
    if (page.pageToken === undefined || name > page.pageToken) all.push(name);
  }
  all.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return takePage(all, page.limit, (n) => n);
}

export function listTableVersions(
  view: CatalogView,
  id: ObjectId,
  page: PageRequest,
  descending: boolean,
  branch?: string,
): Page<VersionRecord> {
  const table = requireLine(requireTable(view, id), branch);
  let after: number | undefined;
  if (page.pageToken !== undefined) {
    after = Number(page.pageToken);
    if (!/^\d+$/.test(page.pageToken) || !Number.isSafeInteger(after)) {
      throw invalidInput(`page_token '${page.pageToken}' is not a version number from an earlier page`);
    }
  }
  const versions = [...table.versions.keys()]
    .filter((v) => after === undefined || (descending ? v < after : v > after))
    .sort((a, b) => (descending ? b - a : a - b));
  return takePage(
    versions.map((v) => table.versions.get(v)!),
    page.limit,
    (v) => String(v.version),
  );
}

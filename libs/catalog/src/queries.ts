import { invalidInput } from './errors';
import { VersionRecord } from './events';
import { ObjectId, displayId } from './ids';
import { requireNamespace } from './namespace-commands';
import { Page, PageRequest, filterIter, takePage } from './pagination';
import { CatalogState } from './catalog-state';
import { CatalogView } from './catalog-view';
import { CallerAccess } from './caller-access';
import { grantedNamespacesIn, grantedTables, grantedTablesIn } from './granted-lists';
import { requireLine } from './table-line';
import { SortedNames } from './sorted-names';
import { isOnlyDeclared, requireTable } from './table-commands';

/**
 * `caller`: a caller whose grants decide and which may not read the namespace itself: it is
 * answered the namespaces on the way to its grants, found from them.
 */
export function listNamespaces(view: CatalogView, id: ObjectId, page: PageRequest, caller?: CallerAccess): Page<string> {
  requireNamespace(view, id);
  if (!caller) return sliced(view.childNamespaces(id), page);
  return takePage(after(grantedNamespacesIn(view, caller, id), page.pageToken), page.limit, (n) => n);
}

/** `caller`: as for listNamespaces; it is answered the tables its grants name there. */
export function listTables(view: CatalogView, id: ObjectId, page: PageRequest, includeDeclared: boolean, caller?: CallerAccess): Page<string> {
  requireNamespace(view, id);
  if (!caller && includeDeclared) return sliced(view.childTables(id), page);
  const names = caller ? after(grantedTablesIn(view, caller, id), page.pageToken) : view.childTables(id).after(page.pageToken);
  const kept = includeDeclared ? names : filterIter(names, (n) => !isOnlyDeclared(view.table([...id, n])!));
  return takePage(kept, page.limit, (n) => n);
}

/**
 * Every table in every namespace, as full identifiers joined by the delimiter, in order.
 * `caller`: a caller whose grants decide and which may not read the database: the tables they reach.
 */
export function listAllTables(state: CatalogState, page: PageRequest, includeDeclared: boolean, delimiter: string, caller?: CallerAccess): Page<string> {
  const all: string[] = [];
  for (const table of caller ? grantedTables(state, caller) : state.allTables()) {
    if (!includeDeclared && isOnlyDeclared(table)) continue;
    const name = displayId(table.id, delimiter);
    if (page.pageToken === undefined || name > page.pageToken) all.push(name);
  }
  all.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return takePage(all, page.limit, (n) => n);
}

/** A page of every name, taken as a slice: what takePage would take from the same names. */
function sliced(names: SortedNames, page: PageRequest): Page<string> {
  const { names: items, more } = names.page(page.pageToken, page.limit);
  return { items, pageToken: more && items.length ? items[items.length - 1] : null };
}

function after(sorted: readonly string[], token: string | undefined): readonly string[] {
  return token === undefined ? sorted : sorted.filter((n) => n > token);
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
  // Numbers first, records for the page alone: a record carries its manifest path, built per
  // version, and a Lance client lists its table's latest version before every read and commit.
  const numbers = takePage(table.versions.range(after, page.limit === undefined ? undefined : page.limit + 1, descending), page.limit, String);
  return { items: numbers.items.map((v) => table.versions.get(v)!), pageToken: numbers.pageToken };
}

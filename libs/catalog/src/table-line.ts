import { branchLocation } from './dataset-layout';
import { CatalogError, ErrorCode, invalidInput } from './errors';
import { VersionRecord } from './events';
import { ObjectId, displayId } from './ids';
import { BranchState, IndexState, TableState } from './table-state';
import { TableVersions } from './table-versions';

/**
 * A table's lines of versions: main, which is the table itself, and each branch, kept by Lance
 * under `tree/<name>`. Every decision and read that takes a table takes it on one line.
 */

/** The branch every table has; naming it is the same as naming none. */
export const MAIN_BRANCH = 'main';

/** What a request names: a table, and the branch it means (absent: main). */
export interface TableRef {
  id: ObjectId;
  branch?: string;
}

/** What main and every branch hold of their own. */
export type LineState = Pick<TableState, 'versions' | 'latestVersion' | 'indexes' | 'maintenance'>;

/** A table as one of its lines shows it: that line's versions, latest version and indexes. */
export type TableLine = TableState & { branch?: string; branchCreatedAtMillis?: number };

/**
 * Branch names become one directory under the table (`tree/<name>`) and one ref file, so they keep
 * to characters every object store takes in a key without escaping.
 */
const BRANCH_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function validateBranchName(name: string): string {
  if (!BRANCH_NAME.test(name) || name.endsWith('.lock') || name.includes('..')) {
    throw invalidInput(
      `branch name '${name}' is not valid`,
      'use 1 to 128 letters, digits, dots, dashes or underscores, starting with a letter or digit',
    );
  }
  if (name === MAIN_BRANCH) throw invalidInput(`'${MAIN_BRANCH}' is the table's own line of versions; pick another name`);
  return name;
}

/** `branch` as a request gave it: absent, empty or `main` all mean the main branch. */
export function branchOf(branch: string | null | undefined): string | undefined {
  return branch === undefined || branch === null || branch === '' || branch === MAIN_BRANCH ? undefined : branch;
}

/** The line's own state: the table on main, its branch otherwise; undefined when either is missing. */
export function findLine(table: TableState | undefined, branch: string | undefined): LineState | undefined {
  return branch === undefined ? table : table?.branches?.get(branch);
}

/**
 * The table seen on `branch` (404 code 22 when it has no such branch); the table itself on main.
 * A branch of an unmanaged table is refused: its commits never reach the catalog.
 */
export function requireLine(table: TableState, branch: string | undefined): TableLine {
  if (branch === undefined) return table;
  refuseBranchOfUnmanaged(table, branch);
  const line = requireBranch(table, branch);
  return {
    ...table,
    versions: line.versions,
    latestVersion: line.latestVersion,
    indexes: line.indexes,
    branch,
    branchCreatedAtMillis: line.createdAtMillis,
  };
}

/** A line that has no version yet: the first commit of a branch the catalog has not heard of. */
export function newLine(table: TableState, branch: string): TableLine {
  const versions = new TableVersions(branchLocation(table.location, branch));
  return { ...table, versions, latestVersion: undefined, indexes: new Map<string, IndexState>(), branch };
}

export function requireBranch(table: TableState, name: string): BranchState {
  const branch = table.branches?.get(name);
  if (!branch) {
    throw new CatalogError(ErrorCode.TableBranchNotFound, `branch '${name}' of table '${displayId(table.id)}' does not exist`);
  }
  return branch;
}

/** Branches are kept through managed versioning: an unmanaged table's commits never reach the catalog. */
export function refuseBranchOfUnmanaged(table: TableState, branch: string | undefined): void {
  if (branch === undefined || table.managedVersioning) return;
  throw new CatalogError(
    ErrorCode.Unsupported,
    `table '${displayId(table.id)}' does not use managed versioning, and this catalog keeps branches through managed versioning only`,
    'Register the table with managed versioning to use branches through this catalog.',
  );
}

/** Where a line's own files live (its versions, HNSW graphs): the branch's tree, or the table's root. */
export function lineLocation(line: TableLine): string {
  return line.branch === undefined ? line.location : branchLocation(line.location, line.branch);
}

/** How messages name a line: the table itself, or one of its branches. */
export function describeLine(line: TableLine): string {
  return line.branch === undefined ? `table '${displayId(line.id)}'` : `branch '${line.branch}' of table '${displayId(line.id)}'`;
}

export function requireVersion(line: TableLine, version: number): VersionRecord {
  const record = line.versions.get(version);
  if (!record) {
    throw new CatalogError(ErrorCode.TableVersionNotFound, `version ${version} of ${describeLine(line)} does not exist`);
  }
  return record;
}

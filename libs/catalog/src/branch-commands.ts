import { CatalogError, ErrorCode, invalidInput } from './errors';
import { CatalogEvent } from './events';
import { ObjectId, displayId } from './ids';
import { branchLocation } from './manifest-names';
import { BranchState, CatalogView, TableState } from './state';
import { requireTable } from './table-commands';
import { requireVersion } from './version-commands';

/** The branch every table has; naming it is the same as naming none. */
export const MAIN_BRANCH = 'main';

/** A table as one of its branches shows it: that branch's versions and latest version. */
export type TableOnBranch = TableState & { branch?: string; branchCreatedAtMillis?: number };

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

export function requireBranch(table: TableState, name: string): BranchState {
  const branch = table.branches?.get(name);
  if (!branch) {
    throw new CatalogError(ErrorCode.TableBranchNotFound, `branch '${name}' of table '${displayId(table.id)}' does not exist`);
  }
  return branch;
}

/**
 * The table seen on `branch` (404 code 22 when it has no such branch); the table itself on main.
 * A branch of an unmanaged table is refused: its commits never reach the catalog.
 */
export function onBranch(table: TableState, branch: string | undefined): TableOnBranch {
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

/** Where the files the catalog keeps for one line of a table live (HNSW graphs): the branch's own tree, or the table's root. */
export function lineLocation(table: TableOnBranch): string {
  return table.branch === undefined ? table.location : branchLocation(table.location, table.branch);
}

export interface CreateTableBranch {
  id: ObjectId;
  name: string;
  fromBranch?: string;
  fromVersion?: number;
  createdAtMillis: number;
}

export function decideCreateTableBranch(view: CatalogView, cmd: CreateTableBranch): CatalogEvent[] {
  const table = requireTable(view, cmd.id);
  refuseBranchOfUnmanaged(table, cmd.name);
  validateBranchName(cmd.name);
  if (table.branches?.has(cmd.name)) {
    throw new CatalogError(
      ErrorCode.TableBranchAlreadyExists,
      `branch '${cmd.name}' of table '${displayId(table.id)}' already exists`,
    );
  }
  const source = onBranch(table, cmd.fromBranch);
  const parentVersion = cmd.fromVersion ?? source.latestVersion;
  if (parentVersion === undefined) {
    throw new CatalogError(
      ErrorCode.InvalidTableState,
      `${cmd.fromBranch ? `branch '${cmd.fromBranch}'` : `table '${displayId(table.id)}'`} has no version yet to branch from; insert data first`,
    );
  }
  requireVersion(source, parentVersion);
  return [
    {
      type: 'TableBranchCreated',
      data: {
        table: table.id,
        tableUuid: table.uuid,
        branch: cmd.name,
        ...(cmd.fromBranch !== undefined ? { parentBranch: cmd.fromBranch } : {}),
        parentVersion,
        createdAtMillis: cmd.createdAtMillis,
        recordedBy: 'CreateTableBranch',
      },
    },
  ];
}

/**
 * `filesGone`: a client already removed the branch's files (Lance's own delete does not call the
 * catalog), so the catalog records what happened, whatever was made from it.
 */
export function decideDeleteTableBranch(view: CatalogView, id: ObjectId, name: string, filesGone?: string): CatalogEvent[] {
  const table = requireTable(view, id);
  refuseBranchOfUnmanaged(table, name);
  requireBranch(table, name);
  if (filesGone !== undefined) {
    return [{ type: 'TableBranchDeleted', data: { table: table.id, tableUuid: table.uuid, branch: name, reason: filesGone } }];
  }
  // A child's first manifest reads its parent's data files in place: they must outlive it.
  const children = [...(table.branches?.values() ?? [])].filter((b) => b.parentBranch === name).map((b) => b.name);
  if (children.length > 0) {
    throw new CatalogError(
      ErrorCode.InvalidTableState,
      `branch '${name}' of table '${displayId(table.id)}' has branches created from it (${children.sort().join(', ')})`,
      'Delete those branches first: they read data files that live in this one.',
    );
  }
  return [{ type: 'TableBranchDeleted', data: { table: table.id, tableUuid: table.uuid, branch: name } }];
}

/** Branches in name order, for ListTableBranches. */
export function branchesOf(table: TableState): BranchState[] {
  return [...(table.branches?.values() ?? [])].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
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

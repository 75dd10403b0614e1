import { CatalogError, ErrorCode } from './errors';
import { CatalogEvent } from './events';
import { ObjectId, displayId } from './ids';
import { CatalogView } from './catalog-view';
import { BranchState, TableState } from './table-state';
import { refuseBranchOfUnmanaged, requireBranch, requireLine, requireVersion, validateBranchName } from './table-line';
import { requireTable } from './table-commands';

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
  const source = requireLine(table, cmd.fromBranch);
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

import { CatalogError, ErrorCode, invalidInput } from './errors';
import { CatalogEvent, ManifestNamingScheme, Properties, VersionRecord } from './events';
import { ObjectId, displayId } from './ids';
import { finalManifestPath } from './dataset-layout';
import { CatalogView } from './catalog-view';
import { TableState } from './table-state';
import { TableLine, describeLine, lineLocation, newLine, requireLine, validateBranchName } from './table-line';
import { requireTable } from './table-commands';

export interface CreateTableVersion {
  id: ObjectId;
  /** Absent: the main branch. */
  branch?: string;
  version: number;
  /** The staging manifest the client wrote; the event records its final name. */
  stagingManifestPath: string;
  manifestSize?: number;
  eTag?: string;
  metadata?: Properties;
  namingScheme: ManifestNamingScheme;
  timestampMillis: number;
}

export function requireManaged(table: TableState): TableState {
  if (!table.managedVersioning) {
    throw new CatalogError(
      ErrorCode.InvalidTableState,
      `table '${displayId(table.id)}' does not use managed versioning; its versions live in its _versions directory`,
    );
  }
  return table;
}

export function decideCreateTableVersion(view: CatalogView, cmd: CreateTableVersion): CatalogEvent[] {
  const table = requireManaged(requireTable(view, cmd.id));
  const events: CatalogEvent[] = [];
  let line: TableLine = table;
  if (cmd.branch !== undefined && table.branches?.has(cmd.branch)) line = requireLine(table, cmd.branch);
  else if (cmd.branch !== undefined) {
    events.push(branchFirstSeen(table, cmd.branch, cmd));
    line = newLine(table, cmd.branch);
  }
  if (line.versions.has(cmd.version)) {
    throw new CatalogError(
      ErrorCode.ConcurrentModification,
      `version ${cmd.version} of ${describeLine(line)} already exists`,
      'Another writer committed this version first; reload the table and retry.',
    );
  }
  const record: VersionRecord = {
    version: cmd.version,
    manifestPath: finalManifestPath(lineLocation(line), cmd.stagingManifestPath, cmd.version, cmd.namingScheme),
    namingScheme: cmd.namingScheme,
    timestampMillis: cmd.timestampMillis,
  };
  if (cmd.manifestSize !== undefined) record.manifestSize = cmd.manifestSize;
  if (cmd.eTag !== undefined) record.eTag = cmd.eTag;
  if (cmd.metadata !== undefined) record.metadata = cmd.metadata;
  const branch = line.branch !== undefined ? { branch: line.branch } : {};
  events.push({ type: 'TableVersionCreated', data: { table: table.id, tableUuid: table.uuid, ...record, ...branch } });
  return events;
}

/**
 * A client creating a branch itself (Lance's create_branch) commits the branch's first version, a
 * copy of the version it starts from, before anything else names the branch: that commit records it.
 */
function branchFirstSeen(table: TableState, branch: string, cmd: CreateTableVersion): CatalogEvent {
  validateBranchName(branch);
  return {
    type: 'TableBranchCreated',
    data: {
      table: table.id,
      tableUuid: table.uuid,
      branch,
      parentVersion: cmd.version,
      createdAtMillis: cmd.timestampMillis,
      recordedBy: 'commit',
    },
  };
}

export interface VersionRange {
  startVersion: number;
  /** Exclusive; -1 means through the latest version. */
  endVersion: number;
}

/** The versions of a line the half-open ranges hold (`-1`: through the latest), ascending. */
export function versionsInRanges(line: Pick<TableLine, 'versions'>, ranges: readonly VersionRange[]): number[] {
  return [...line.versions.keys()].filter((v) => ranges.some((r) => v >= r.startVersion && (r.endVersion === -1 || v < r.endVersion))).sort((a, b) => a - b);
}

/**
 * Deletes version records of a line. A version a tag points at (`tagged`: the line's tags, read from
 * Lance's `_refs/`, by version) or a branch was made from stays, as Lance's own cleanup keeps them:
 * deleting its record would leave the tag or the branch naming a version the catalog no longer has
 * (409 code 19; delete the tag or the branch first).
 */
export function decideDeleteTableVersions(
  view: CatalogView,
  id: ObjectId,
  ranges: readonly VersionRange[],
  branch?: string,
  tagged: ReadonlyMap<number, string> = new Map(),
): CatalogEvent[] {
  const managed = requireManaged(requireTable(view, id));
  const table = requireLine(managed, branch);
  for (const r of ranges) {
    if (r.startVersion < 0) throw invalidInput('start_version must be >= 0');
    if (r.endVersion < -1) throw invalidInput('end_version must be >= 0, or -1 for every version');
  }
  const doomed = versionsInRanges(table, ranges);
  if (doomed.length === 0) return [];
  const tag = doomed.find((v) => tagged.has(v));
  if (tag !== undefined) {
    throw new CatalogError(ErrorCode.InvalidTableState, `version ${tag} of ${describeLine(table)} is tagged '${tagged.get(tag)}'; delete or move the tag first`);
  }
  // A branch first seen in a client's commit has no parent the catalog knows (Lance's ref file names it).
  const base = [...(managed.branches?.values() ?? [])].find((b) => b.recordedBy === 'CreateTableBranch' && b.parentBranch === branch && doomed.includes(b.parentVersion));
  if (base) {
    throw new CatalogError(ErrorCode.InvalidTableState, `version ${base.parentVersion} of ${describeLine(table)} is where branch '${base.name}' starts; delete the branch first`);
  }
  const on = branch !== undefined ? { branch } : {};
  return [{ type: 'TableVersionsDeleted', data: { table: table.id, tableUuid: table.uuid, versions: doomed, ...on } }];
}

/**
 * Versions of a line whose manifests are gone from storage (a client's own cleanup removed them,
 * or a maintenance job's): recorded deleted with the reason, so no answer names them again. The
 * latest version is never among them: a line's latest manifest gone is a broken table, not history.
 */
export function decideVersionsGone(
  view: CatalogView,
  cmd: { id: ObjectId; branch?: string; versions: readonly number[]; reason: string; transactionId?: string },
): CatalogEvent[] {
  const line = requireLine(requireManaged(requireTable(view, cmd.id)), cmd.branch);
  const gone = [...new Set(cmd.versions)].filter((v) => v !== line.latestVersion && line.versions.has(v)).sort((a, b) => a - b);
  if (gone.length === 0) return [];
  return [
    {
      type: 'TableVersionsDeleted',
      data: {
        table: line.id,
        tableUuid: line.uuid,
        versions: gone,
        ...(cmd.branch !== undefined ? { branch: cmd.branch } : {}),
        reason: cmd.reason,
        ...(cmd.transactionId !== undefined ? { transactionId: cmd.transactionId } : {}),
      },
    },
  ];
}


import { CatalogError, ErrorCode, invalidInput } from './errors';
import { CatalogEvent, ManifestNamingScheme, Properties, VersionRecord } from './events';
import { ObjectId, displayId } from './ids';
import { finalManifestPath } from './manifest-names';
import { CatalogView, TableState } from './state';
import { requireTable } from './table-commands';

export interface CreateTableVersion {
  id: ObjectId;
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
  if (table.versions.has(cmd.version)) {
    throw new CatalogError(
      ErrorCode.ConcurrentModification,
      `version ${cmd.version} of table '${displayId(cmd.id)}' already exists`,
      'Another writer committed this version first; reload the table and retry.',
    );
  }
  const record: VersionRecord = {
    version: cmd.version,
    manifestPath: finalManifestPath(table.location, cmd.stagingManifestPath, cmd.version, cmd.namingScheme),
    namingScheme: cmd.namingScheme,
    timestampMillis: cmd.timestampMillis,
  };
  if (cmd.manifestSize !== undefined) record.manifestSize = cmd.manifestSize;
  if (cmd.eTag !== undefined) record.eTag = cmd.eTag;
  if (cmd.metadata !== undefined) record.metadata = cmd.metadata;
  return [{ type: 'TableVersionCreated', data: { table: table.id, tableUuid: table.uuid, ...record } }];
}

export interface VersionRange {
  startVersion: number;
  /** Exclusive; -1 means through the latest version. */
  endVersion: number;
}

export function decideDeleteTableVersions(
  view: CatalogView,
  id: ObjectId,
  ranges: readonly VersionRange[],
): CatalogEvent[] {
  const table = requireManaged(requireTable(view, id));
  for (const r of ranges) {
    if (r.startVersion < 0) throw invalidInput('start_version must be >= 0');
    if (r.endVersion < -1) throw invalidInput('end_version must be >= 0, or -1 for every version');
  }
  const doomed = [...table.versions.keys()]
    .filter((v) => ranges.some((r) => v >= r.startVersion && (r.endVersion === -1 || v < r.endVersion)))
    .sort((a, b) => a - b);
  if (doomed.length === 0) return [];
  return [{ type: 'TableVersionsDeleted', data: { table: table.id, tableUuid: table.uuid, versions: doomed } }];
}

export function requireVersion(table: TableState, version: number): VersionRecord {
  const record = table.versions.get(version);
  if (!record) {
    throw new CatalogError(
      ErrorCode.TableVersionNotFound,
      `version ${version} of table '${displayId(table.id)}' does not exist`,
    );
  }
  return record;
}

import {
  CatalogState,
  DATASET_DIRS,
  TableState,
  VersionSet,
  branchLocation,
  displayId,
  finalManifestName,
  inDataset,
  locationKey,
  manifestFile,
  safeSegment,
  tagRefFile,
  versionsDir,
} from '@app/catalog';
import { BranchRefFiles, TagFiles, manifestIndices } from '@app/lance';
import { TableFiles, joinLocation } from '@app/storage';
import { WarehouseFolders } from './warehouse-folders';

export interface Finding {
  kind:
    | 'missing-manifest'
    | 'manifest-size'
    | 'missing-location'
    | 'missing-index'
    | 'index-files'
    | 'tag'
    | 'branch'
    | 'orphan-folder'
    | 'log-gap'
    | 'unknown-event'
    | 'unfinished-load';
  database: string;
  table?: string;
  location: string;
  problem: string;
  action: string;
}

/** The catalog's last word on each tag of a table: the version it names, or deleted. */
export type RecordedTags = Map<string, Map<string, { version?: number; branch?: string }>>;

/**
 * Compares one database's catalog with the warehouse's files, reading only: the manifests of every
 * recorded version, table folders, the indexes Lance lists and the catalog asked for, tags and
 * branches, and folders nothing in the catalog accounts for.
 */
export class CatalogCheck {
  private readonly tags: TagFiles;
  private readonly branches: BranchRefFiles;

  constructor(
    private readonly files: TableFiles,
    private readonly folders: WarehouseFolders,
    private readonly report: (finding: Finding) => void,
  ) {
    this.tags = new TagFiles(files);
    this.branches = new BranchRefFiles(files);
  }

  async table(database: string, state: CatalogState, table: TableState, recordedTags: RecordedTags): Promise<void> {
    const name = displayId(table.id);
    const found = (f: Omit<Finding, 'database' | 'table'>) => this.report({ database, table: name, ...f });
    if (table.versions.size === 0 && !table.branches?.size) return;
    const onDisk = await this.manifests(table.location);
    if (onDisk.size === 0) {
      found({
        kind: 'missing-location',
        location: table.location,
        problem: `the table's folder is gone, or holds none of its ${table.versions.size} recorded versions`,
        action: 'restore the folder from a backup of the warehouse, or drop the table from the catalog (DropTable or DeregisterTable)',
      });
      return;
    }
    await this.versions(table.location, table.versions, onDisk, found);
    for (const branch of table.branches?.values() ?? []) {
      const line = branchLocation(table.location, branch.name);
      await this.versions(line, branch.versions, await this.manifests(line), found);
      if (!(await this.branches.exists(table.location, branch.name))) {
        found({
          kind: 'branch',
          location: this.branches.path(table.location, branch.name),
          problem: `branch '${branch.name}' has no ref file: Lance clients do not see it`,
          action: `delete the branch (DeleteTableBranch) or restore its ref file from a backup`,
        });
      }
    }
    for (const ref of await this.branches.list(table.location)) {
      if (!table.branches?.has(ref.name)) {
        found({
          kind: 'branch',
          location: this.branches.path(table.location, ref.name),
          problem: `branch '${ref.name}' exists in Lance but not in the catalog`,
          action: 'record it by committing to it through the catalog, or delete its ref file and tree/ folder',
        });
      }
    }
    await this.tagsOf(table, recordedTags.get(table.uuid) ?? new Map(), found);
    await this.indexes(state, table, onDisk, found);
  }

  /** Folders of the warehouse no live table, pending purge or namespace accounts for. */
  async orphans(root: string, states: Map<string, CatalogState>): Promise<void> {
    for (const database of await this.folders.list(root)) {
      const state = states.get(database);
      const location = joinLocation(root, database);
      if (!state) {
        this.report({ kind: 'orphan-folder', database, location, problem: 'a folder for a database the catalog has never had', action: ORPHAN_ACTION });
        continue;
      }
      const owned = new Set<string>();
      const onTheWay = new Set<string>();
      const own = (loc: string) => {
        const key = locationKey(loc);
        owned.add(key);
        for (let i = key.lastIndexOf('/'); i > 0; i = key.lastIndexOf('/', i - 1)) onTheWay.add(key.slice(0, i));
      };
      for (const t of state.allTables()) own(t.location);
      for (const p of state.allPendingPurges()) own(p.location);
      for (const ns of state.allNamespaces()) if (ns.id.length) onTheWay.add(locationKey(joinLocation(location, ...ns.id.map(safeSegment))));
      await this.walk(database, location, owned, onTheWay);
    }
  }

  private async walk(database: string, folder: string, owned: Set<string>, onTheWay: Set<string>): Promise<void> {
    for (const name of await this.folders.list(folder)) {
      const location = joinLocation(folder, name);
      const key = locationKey(location);
      if (owned.has(key)) continue;
      if (onTheWay.has(key)) await this.walk(database, location, owned, onTheWay);
      else this.report({ kind: 'orphan-folder', database, location, problem: 'a folder that belongs to no table, dropped table awaiting purge or namespace', action: ORPHAN_ACTION });
    }
  }

  /** The committed manifests of a line (a table's main or a branch), by file name, with their sizes. */
  private async manifests(line: string): Promise<Map<string, number>> {
    return new Map((await this.files.list(versionsDir(line))).map((f) => [f.name, f.size]));
  }

  private async versions(line: string, versions: VersionSet, onDisk: Map<string, number>, found: (f: Omit<Finding, 'database' | 'table'>) => void): Promise<void> {
    for (const record of versions.values()) {
      const file = finalManifestName(record.version, record.namingScheme);
      const size = onDisk.get(file);
      const location = manifestFile(line, record.version, record.namingScheme);
      if (size === undefined) {
        found({
          kind: 'missing-manifest',
          location,
          problem: `version ${record.version}'s manifest is gone`,
          action: `restore it from a backup of the warehouse, or delete the version from the catalog (DeleteTableVersions with version ${record.version})`,
        });
      } else if (record.manifestSize !== undefined && record.manifestSize !== size) {
        found({
          kind: 'manifest-size',
          location,
          problem: `version ${record.version}'s manifest holds ${size} bytes where ${record.manifestSize} were recorded: it was replaced`,
          action: 'restore the recorded manifest from a backup of the warehouse',
        });
      }
    }
  }

  private async tagsOf(table: TableState, recorded: Map<string, { version?: number; branch?: string }>, found: (f: Omit<Finding, 'database' | 'table'>) => void): Promise<void> {
    const onDisk = await this.tags.list(table.location);
    const path = (tag: string) => tagRefFile(table.location, tag);
    for (const [tag, said] of recorded) {
      const file = onDisk[tag];
      if (said.version === undefined) {
        if (file) found({ kind: 'tag', location: path(tag), problem: `tag '${tag}' was deleted through the catalog but its file is there`, action: 'delete the tag again (DeleteTableTag)' });
      } else if (!file) {
        found({
          kind: 'tag',
          location: path(tag),
          problem: `tag '${tag}' (version ${said.version}) has no file: Lance clients do not see it`,
          action: `create it again (CreateTableTag '${tag}' at version ${said.version}) or delete it (DeleteTableTag)`,
        });
      } else if (file.version !== said.version || (file.branch ?? undefined) !== said.branch) {
        found({
          kind: 'tag',
          location: path(tag),
          problem: `tag '${tag}' names version ${file.version} in its file and ${said.version} in the catalog`,
          action: `move it through the catalog (UpdateTableTag) to the version it should name`,
        });
      }
    }
    for (const tag of Object.keys(onDisk)) {
      if (!recorded.has(tag)) {
        found({ kind: 'tag', location: path(tag), problem: `tag '${tag}' exists in Lance but not in the catalog`, action: 'make tag changes through the catalog (CreateTableTag), or delete the file' });
      }
    }
  }

  private async indexes(state: CatalogState, table: TableState, onDisk: Map<string, number>, found: (f: Omit<Finding, 'database' | 'table'>) => void): Promise<void> {
    const latest = table.latestVersion ?? table.versions.latest();
    const record = latest === undefined ? undefined : table.versions.get(latest);
    if (!record || !onDisk.has(finalManifestName(record.version, record.namingScheme))) return;
    const bytes = await this.files.read(manifestFile(table.location, record.version, record.namingScheme));
    if (!bytes) return;
    let listed;
    try {
      listed = manifestIndices(bytes);
    } catch {
      return;
    }
    for (const index of listed) {
      const folder = inDataset(table.location, DATASET_DIRS.indices, index.uuid);
      if ((await this.files.list(folder)).length === 0) {
        found({
          kind: 'index-files',
          location: folder,
          problem: `index '${index.name}' of version ${record.version} has no files`,
          action: `drop the index (DropTableIndex '${index.name}') and create it again (CreateTableIndex)`,
        });
      }
    }
    const names = new Set(listed.map((i) => i.name));
    for (const index of table.indexes.values()) {
      const status = state.transaction(index.transactionId)?.status;
      if (status !== undefined && status !== 'Succeeded') continue;
      if (!names.has(index.name)) {
        found({
          kind: 'missing-index',
          location: table.location,
          problem: `index '${index.name}' the catalog lists is not in Lance's latest version (${record.version})`,
          action: `create it again (CreateTableIndex '${index.name}'), or drop it from the catalog (DropTableIndex)`,
        });
      }
    }
  }
}

const ORPHAN_ACTION = 'nothing was deleted: register it as a table (RegisterTable) if it holds one, or remove it by hand once sure no one needs it';

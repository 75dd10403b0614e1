import { randomUUID } from 'node:crypto';
import { DATASET_DIRS, ObjectId, VersionRecord, branchLocation, couldBeNamespaceFolder, DATABASE_NAME } from '@app/catalog';
import { BranchRefFiles, TagFiles, TagRecord, listManifestsOnDisk } from '@app/lance';
import { TableFiles, joinLocation } from '@app/storage';
import { WarehouseFolders } from './warehouse-folders';

/** What the warehouse's own files tell of one table. */
export interface FoundTable {
  id: ObjectId;
  uuid: string;
  location: string;
  versions: VersionRecord[];
  branches: Array<{ name: string; parentBranch?: string; parentVersion: number; createdAtMillis: number; versions: VersionRecord[] }>;
  tags: Record<string, TagRecord>;
}

export interface FoundDatabase {
  database: string;
  /** Namespaces, parents before children. */
  namespaces: ObjectId[];
  tables: FoundTable[];
  /** Folders that could not be read as a namespace or a table. */
  skipped: string[];
}

/** `<name>-<first 12 hex digits of the uuid>.lance`: how the catalog names a table's folder. */
const TABLE_FOLDER = /^(.+)-([0-9a-f]{12})\.lance$/;
/**
 * Lance's own folders inside a table's (met when a table folder holds no committed version): no
 * namespace. A namespace's folder may start with `_` too: `_staging`, or `école` written `_cole`.
 */
const LANCE_FOLDERS = new Set<string>(Object.values(DATASET_DIRS).filter((d) => d.startsWith('_') && !d.includes('/')));

/**
 * Reads the catalog's layout back from the warehouse: `<root>/<database>/<namespace>/.../<table>`,
 * a table being any folder with committed manifests in `_versions/`; each table's versions, branches
 * and tags from Lance's own files. Names come back as their folders spell them.
 */
export async function readWarehouseLayout(root: string, files: TableFiles, folders: WarehouseFolders, onTable: () => void): Promise<FoundDatabase[]> {
  const found: FoundDatabase[] = [];
  const tags = new TagFiles(files);
  const branches = new BranchRefFiles(files);
  for (const database of await folders.list(root)) {
    const result: FoundDatabase = { database, namespaces: [], tables: [], skipped: [] };
    if (!DATABASE_NAME.test(database)) {
      result.skipped.push(joinLocation(root, database));
      found.push(result);
      continue;
    }
    const walk = async (folder: string, namespace: string[]): Promise<void> => {
      const taken = new Set<string>();
      const children = await folders.list(folder);
      const tablesHere: Array<{ name: string; location: string; versions: VersionRecord[] }> = [];
      const namespacesHere: string[] = [];
      for (const child of children) {
        const location = joinLocation(folder, child);
        const versions = await listManifestsOnDisk(files, location);
        if (versions.length) tablesHere.push({ name: child, location, versions });
        else if (couldBeNamespaceFolder(location) && !LANCE_FOLDERS.has(child)) namespacesHere.push(child);
        else result.skipped.push(location);
      }
      // A name two folders claim (a dropped table awaiting purge, and the one made after it): the
      // newest keeps it, the others are named after their whole folder.
      tablesHere.sort((a, b) => newest(b.versions) - newest(a.versions));
      for (const t of tablesHere) {
        const m = TABLE_FOLDER.exec(t.name);
        let name = m ? m[1] : t.name.replace(/\.lance$/, '');
        if (taken.has(name) || namespacesHere.includes(name)) name = t.name.replace(/\.lance$/, '');
        taken.add(name);
        const hex = m ? m[2] : randomUUID().replace(/-/g, '').slice(0, 12);
        const uuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${randomUUID().slice(14)}`;
        const lines = [];
        for (const ref of await branches.list(t.location)) {
          lines.push({
            name: ref.name,
            ...(ref.parentBranch ? { parentBranch: ref.parentBranch } : {}),
            parentVersion: ref.parentVersion,
            createdAtMillis: ref.createAt * 1000,
            versions: await listManifestsOnDisk(files, branchLocation(t.location, ref.name)),
          });
        }
        result.tables.push({ id: [...namespace, name], uuid, location: t.location, versions: t.versions, branches: parentsFirst(lines), tags: await tags.list(t.location) });
        onTable();
      }
      for (const child of namespacesHere) {
        const id = [...namespace, child];
        const before = result.tables.length;
        await walk(joinLocation(folder, child), id);
        if (result.tables.length > before) result.namespaces.push(id);
      }
    };
    await walk(joinLocation(root, database), []);
    result.namespaces.sort((a, b) => a.length - b.length);
    found.push(result);
  }
  return found;
}

function newest(versions: VersionRecord[]): number {
  return versions.reduce((n, v) => Math.max(n, v.timestampMillis), 0);
}

function parentsFirst<T extends { name: string; parentBranch?: string }>(lines: T[]): T[] {
  const ordered: T[] = [];
  const placed = new Set<string>();
  let rest = lines;
  while (rest.length) {
    const ready = rest.filter((l) => l.parentBranch === undefined || placed.has(l.parentBranch) || !lines.some((o) => o.name === l.parentBranch));
    if (!ready.length) return [...ordered, ...rest];
    for (const l of ready) placed.add(l.name);
    ordered.push(...ready);
    rest = rest.filter((l) => !placed.has(l.name));
  }
  return ordered;
}


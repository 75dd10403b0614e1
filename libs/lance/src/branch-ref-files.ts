import { randomUUID } from 'node:crypto';
import { branchRefFile, branchRefsDir, refNameOf } from '@app/catalog';
import { TableFiles } from '@app/storage';

/** What a branch's ref file records of where the branch came from. */
export interface BranchOrigin {
  parentBranch?: string;
  parentVersion: number;
  /** Size of the manifest the branch started from. */
  manifestSize: number;
  createdAtMillis: number;
}

type VersionMapping = Array<[number, string]>;

/**
 * Lance's branch ref files (`_refs/branches/<name>.json`) written by the catalog itself, for object
 * stores that refuse the conditional PUT Lance creates them with (Swift's s3api): Lance commits the
 * branch's first version through the catalog, then fails on this file. The file holds what Lance
 * writes: the branch's lineage (`identifier.version_mapping`: the parent's lineage and one fresh
 * id at the version the branch starts from), so Lance clients list and open the branch as theirs.
 */
export class BranchRefFiles {
  constructor(private readonly files: TableFiles) {}

  path(location: string, branch: string): string {
    return branchRefFile(location, branch);
  }

  async exists(location: string, branch: string): Promise<boolean> {
    return (await this.files.head(this.path(location, branch))) !== undefined;
  }

  /** Every branch Lance keeps a ref file of, with what the file records (a table whose commits the catalog does not see). */
  async list(location: string): Promise<Array<{ name: string; parentBranch?: string; parentVersion: number; createAt: number; manifestSize: number }>> {
    const listed = [];
    for (const file of await this.files.list(branchRefsDir(location))) {
      const name = refNameOf(file.name);
      if (name === undefined) continue;
      const bytes = await this.files.read(this.path(location, name));
      if (!bytes) continue;
      const stored = JSON.parse(bytes.toString('utf8')) as { parentBranch?: string | null; parentVersion: number; createAt: number; manifestSize?: number };
      listed.push({
        name,
        ...(stored.parentBranch ? { parentBranch: stored.parentBranch } : {}),
        parentVersion: stored.parentVersion,
        createAt: stored.createAt,
        manifestSize: stored.manifestSize ?? 0,
      });
    }
    return listed.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The parent branch the ref file names; undefined for main, or when there is no readable file. */
  async parentOf(location: string, branch: string): Promise<string | undefined> {
    const bytes = await this.files.read(this.path(location, branch)).catch(() => undefined);
    if (!bytes) return undefined;
    try {
      return (JSON.parse(bytes.toString('utf8')) as { parentBranch?: string | null }).parentBranch ?? undefined;
    } catch {
      return undefined;
    }
  }

  remove(location: string, branch: string): Promise<void> {
    return this.files.remove(this.path(location, branch));
  }

  async write(location: string, branch: string, origin: BranchOrigin): Promise<void> {
    const lineage = origin.parentBranch === undefined ? [] : await this.lineageOf(location, origin.parentBranch);
    const body = {
      parentBranch: origin.parentBranch ?? null,
      identifier: { version_mapping: [...lineage, [origin.parentVersion, randomUUID().replace(/-/g, '')]] },
      parentVersion: origin.parentVersion,
      createAt: Math.floor(origin.createdAtMillis / 1000),
      manifestSize: origin.manifestSize,
      metadata: {},
    };
    await this.files.write(this.path(location, branch), Buffer.from(JSON.stringify(body, null, 2)));
  }

  private async lineageOf(location: string, branch: string): Promise<VersionMapping> {
    const bytes = await this.files.read(this.path(location, branch));
    if (!bytes) return [];
    const stored = JSON.parse(bytes.toString('utf8')) as { identifier?: { version_mapping?: VersionMapping } };
    return stored.identifier?.version_mapping ?? [];
  }
}

import { branchLocation, manifestFile, refNameOf, tagRefFile, tagRefsDir } from '@app/catalog';
import { TableFiles } from '@app/storage';

/** A tag as Lance keeps it: which version it names, and that version's manifest size. */
export interface TagRecord {
  version: number;
  manifestSize: number;
  /** The branch the version lives on; absent: main. */
  branch?: string;
}

/**
 * Lance's tags (`_refs/tags/<tag>.json`) written by the catalog itself, for object stores that
 * refuse the conditional PUT Lance creates and moves a tag with (Swift's s3api). The file holds
 * what Lance writes, so every Lance client reads these tags (and checks out by them) as its own.
 * Changes to one table's tags are serialised in this process; the catalog's record of each change
 * is the event that follows.
 */
export class TagFiles {
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly files: TableFiles) {}

  async list(location: string): Promise<Record<string, TagRecord>> {
    const tags: Record<string, TagRecord> = {};
    for (const tag of await this.names(location)) {
      const record = await this.get(location, tag);
      if (record) tags[tag] = record;
    }
    return tags;
  }

  /**
   * The versions of a line (`branch`, absent: main) its tags point at, each with a tag's name. A tag
   * file that cannot be read points at nothing, as Lance cannot read it either.
   */
  async versionsTagged(location: string, branch: string | undefined): Promise<Map<number, string>> {
    const tagged = new Map<number, string>();
    for (const name of await this.names(location)) {
      const tag = await this.get(location, name).catch(() => undefined);
      if (tag && (tag.branch ?? undefined) === branch) tagged.set(tag.version, name);
    }
    return tagged;
  }

  /** The names of the table's tags, as their files in `_refs/tags/` give them. */
  private async names(location: string): Promise<string[]> {
    return (await this.files.list(tagRefsDir(location))).map((file) => refNameOf(file.name)).filter((tag): tag is string => tag !== undefined);
  }

  async get(location: string, tag: string): Promise<TagRecord | undefined> {
    const bytes = await this.files.read(this.path(location, tag));
    if (!bytes) return undefined;
    const stored = JSON.parse(bytes.toString('utf8')) as { version: number; manifestSize?: number; branch?: string | null };
    return { version: stored.version, manifestSize: stored.manifestSize ?? 0, ...(stored.branch ? { branch: stored.branch } : {}) };
  }

  /** Writes the tag unless `exists` says otherwise: false when it already existed (create) or did not (update). */
  put(location: string, tag: string, version: number, change: 'create' | 'update', branch?: string): Promise<boolean> {
    return this.serialised(location, async () => {
      const current = await this.get(location, tag);
      if ((change === 'create') === (current !== undefined)) return false;
      const now = new Date().toISOString();
      const body = {
        branch: branch ?? null,
        version,
        createdAt: now,
        updatedAt: now,
        manifestSize: await this.manifestSize(branch === undefined ? location : branchLocation(location, branch), version),
        metadata: {},
      };
      await this.files.write(this.path(location, tag), Buffer.from(JSON.stringify(body, null, 2)));
      return true;
    });
  }

  remove(location: string, tag: string): Promise<void> {
    return this.serialised(location, () => this.files.remove(this.path(location, tag)));
  }

  private async manifestSize(location: string, version: number): Promise<number> {
    for (const scheme of ['V2', 'V1'] as const) {
      const info = await this.files.head(manifestFile(location, version, scheme));
      if (info) return info.size;
    }
    return 0;
  }

  private path(location: string, tag: string): string {
    return tagRefFile(location, tag);
  }

  private serialised<T>(key: string, work: () => Promise<T>): Promise<T> {
    const run = (this.queues.get(key) ?? Promise.resolve()).then(work, work);
    const settled = run.catch(() => undefined);
    this.queues.set(key, settled);
    void settled.then(() => this.queues.get(key) === settled && this.queues.delete(key));
    return run;
  }
}

import type { Table as LanceTable } from '@lancedb/lancedb';
import { CatalogError, ErrorCode, ObjectId, PageRequest, decideRecordTableTagChanged, invalidInput, takePage } from '@app/catalog';
import { TagFiles, TagRecord } from '@app/lance';
import { CatalogWriter } from './catalog-writer';
import { DataService } from './data-service';
import { lanceInputError } from './lance-errors';
import { RequestContext } from './request-context';

/**
 * Tags are Lance's own (kept in the dataset's `_refs/`); the catalog checks versions and names. On
 * an object store that refuses conditional PUTs the catalog writes Lance's tag files itself
 * (`tagFiles`), since Lance cannot.
 */
export class TagService {
  /** Lance's tag files read as they are: Lance's own listing leaves out the branch of each tag. */
  private readonly tagReader: TagFiles;

  constructor(
    private readonly data: DataService,
    private readonly writer: CatalogWriter,
    private readonly tagFiles?: TagFiles,
  ) {
    this.tagReader = tagFiles ?? new TagFiles(data.files);
  }

  private record(ctx: RequestContext, id: ObjectId, tag: string, change: 'created' | 'updated' | 'deleted', version?: number, branch?: string) {
    const operation = { created: 'CreateTableTag', updated: 'UpdateTableTag', deleted: 'DeleteTableTag' }[change];
    return this.writer.execute(ctx, operation, (view) => ({
      events: decideRecordTableTagChanged(view, { id, tag, change, version, branch }),
      result: (transactionId) => ({ transaction_id: transactionId }),
    }));
  }

  private async withTable<T>(ctx: RequestContext, id: ObjectId, work: (t: LanceTable) => Promise<T>, branch?: string): Promise<T> {
    const table = await this.data.table(ctx, id, undefined, branch);
    // Tags live in `_refs/`, not in versions: changing one commits nothing, so reading access will do.
    return this.data.use(ctx, table, 'read', work);
  }

  private async listOf(ctx: RequestContext, id: ObjectId): Promise<Record<string, TagRecord>> {
    const table = await this.data.table(ctx, id);
    if (await this.data.isOnlyDeclared(table)) throw new CatalogError(ErrorCode.TableNotFound, `table '${id.join(ctx.delimiter)}' has no data yet`);
    return this.tagReader.list(table.location);
  }

  async listTags(ctx: RequestContext, id: ObjectId, page: PageRequest) {
    const tags = await this.listOf(ctx, id);
    const names = Object.keys(tags)
      .filter((n) => page.pageToken === undefined || n > page.pageToken)
      .sort();
    const result = takePage(names, page.limit, (n) => n);
    return {
      tags: Object.fromEntries(result.items.map((n) => [n, tagContents(tags[n])])),
      page_token: result.pageToken,
    };
  }

  async getTagVersion(ctx: RequestContext, id: ObjectId, tag: string) {
    const tags = await this.listOf(ctx, id);
    versionOf(tags, tag);
    const { manifestSize: _m, ...answer } = tagContents(tags[tag]);
    return answer;
  }

  /** `branch`: the branch `version` lives on (absent: main); the tag still lives with the table. */
  async createTag(ctx: RequestContext, id: ObjectId, tag: string, version: number, branch?: string) {
    checkTagName(tag);
    if ((await this.listOf(ctx, id))[tag]) throw new CatalogError(ErrorCode.TableTagAlreadyExists, `tag '${tag}' already exists`);
    return this.pointTag(ctx, id, tag, version, branch, 'create');
  }

  async updateTag(ctx: RequestContext, id: ObjectId, tag: string, version: number, branch?: string) {
    // The version it would point at first (404 code 11), then the tag (404 code 8), as the conformance contracts order them.
    await this.data.table(ctx, id, version, branch);
    versionOf(await this.listOf(ctx, id), tag);
    return this.pointTag(ctx, id, tag, version, branch, 'update');
  }

  /** Points a new (`create`) or existing (`update`) tag at a version, and records the change. */
  private async pointTag(ctx: RequestContext, id: ObjectId, tag: string, version: number, branch: string | undefined, change: 'create' | 'update') {
    const table = await this.data.table(ctx, id, version, branch);
    if (this.tagFiles) {
      if (!(await this.tagFiles.put(table.location, tag, version, change, branch))) {
        throw change === 'create'
          ? new CatalogError(ErrorCode.TableTagAlreadyExists, `tag '${tag}' already exists`)
          : new CatalogError(ErrorCode.TableTagNotFound, `tag '${tag}' does not exist`);
      }
    } else {
      await this.withTable(
        ctx,
        id,
        async (t) =>
          (await t.tags())[change](tag, version).catch((e) => {
            throw lanceInputError(e, `${change === 'create' ? 'creating' : 'updating'} the tag failed`);
          }),
        branch,
      );
    }
    return this.record(ctx, id, tag, change === 'create' ? 'created' : 'updated', version, branch);
  }

  async deleteTag(ctx: RequestContext, id: ObjectId, tag: string) {
    versionOf(await this.listOf(ctx, id), tag);
    if (this.tagFiles) await this.tagFiles.remove((await this.data.table(ctx, id)).location, tag);
    else await this.withTable(ctx, id, async (t) => (await t.tags()).delete(tag));
    return this.record(ctx, id, tag, 'deleted');
  }
}

/** TagContents as the spec has it: `branch` only when the version is not on main. */
function tagContents(t: TagRecord) {
  return { version: t.version, manifestSize: t.manifestSize, ...(t.branch ? { branch: t.branch } : {}) };
}

function versionOf(tags: Record<string, TagRecord>, tag: string): number {
  if (!tags[tag]) throw new CatalogError(ErrorCode.TableTagNotFound, `tag '${tag}' does not exist`);
  return tags[tag].version;
}

function checkTagName(tag: string): void {
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(tag) || tag.startsWith('.') || tag.includes('..')) {
    throw invalidInput(`tag '${tag}' must be 1-128 characters of [A-Za-z0-9._-], not starting with '.'`);
  }
}

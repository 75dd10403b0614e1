import type { Table as LanceTable } from '@lancedb/lancedb';
import { CatalogError, ErrorCode, ObjectId, PageRequest, decideRecordTableTagChanged, invalidInput, takePage } from '@app/catalog';
import { CatalogWriter } from './catalog-writer';
import { DataService } from './data-service';
import { lanceInputError } from './lance-errors';
import { RequestContext } from './request-context';

/** Tags are Lance's own (kept in the dataset's `_refs/`); the catalog checks versions and names. */
export class TagService {
  constructor(
    private readonly data: DataService,
    private readonly writer: CatalogWriter,
  ) {}

  private record(ctx: RequestContext, id: ObjectId, tag: string, change: 'created' | 'updated' | 'deleted', version?: number) {
    const operation = { created: 'CreateTableTag', updated: 'UpdateTableTag', deleted: 'DeleteTableTag' }[change];
    return this.writer.execute(ctx, operation, (view) => ({
      events: decideRecordTableTagChanged(view, { id, tag, change, version }),
      result: (transactionId) => ({ transaction_id: transactionId }),
    }));
  }

  private async withTable<T>(ctx: RequestContext, id: ObjectId, work: (t: LanceTable) => Promise<T>): Promise<T> {
    const table = await this.data.table(ctx, id);
    // Tags live in `_refs/`, not in versions: changing one commits nothing, so reading access will do.
    return this.data.use(ctx, table, 'read', work);
  }

  listTags(ctx: RequestContext, id: ObjectId, page: PageRequest) {
    return this.withTable(ctx, id, async (t) => {
      const tags = await (await t.tags()).list();
      const names = Object.keys(tags)
        .filter((n) => page.pageToken === undefined || n > page.pageToken)
        .sort();
      const result = takePage(names, page.limit, (n) => n);
      return {
        tags: Object.fromEntries(result.items.map((n) => [n, { version: tags[n].version, manifestSize: tags[n].manifestSize }])),
        page_token: result.pageToken,
      };
    });
  }

  getTagVersion(ctx: RequestContext, id: ObjectId, tag: string) {
    return this.withTable(ctx, id, async (t) => ({ version: await this.versionOf(t, tag) }));
  }

  createTag(ctx: RequestContext, id: ObjectId, tag: string, version: number) {
    checkTagName(tag);
    return this.withTable(ctx, id, async (t) => {
      const tags = await t.tags();
      if ((await tags.list())[tag]) throw new CatalogError(ErrorCode.TableTagAlreadyExists, `tag '${tag}' already exists`);
      await this.data.table(ctx, id, version);
      await tags.create(tag, version).catch((e) => {
        throw lanceInputError(e, 'creating the tag failed');
      });
      return this.record(ctx, id, tag, 'created', version);
    });
  }

  updateTag(ctx: RequestContext, id: ObjectId, tag: string, version: number) {
    return this.withTable(ctx, id, async (t) => {
      await this.versionOf(t, tag);
      await this.data.table(ctx, id, version);
      await (await t.tags()).update(tag, version).catch((e) => {
        throw lanceInputError(e, 'updating the tag failed');
      });
      return this.record(ctx, id, tag, 'updated', version);
    });
  }

  deleteTag(ctx: RequestContext, id: ObjectId, tag: string) {
    return this.withTable(ctx, id, async (t) => {
      await this.versionOf(t, tag);
      await (await t.tags()).delete(tag);
      return this.record(ctx, id, tag, 'deleted');
    });
  }

  private async versionOf(t: LanceTable, tag: string): Promise<number> {
    const tags = await (await t.tags()).list();
    if (!tags[tag]) throw new CatalogError(ErrorCode.TableTagNotFound, `tag '${tag}' does not exist`);
    return tags[tag].version;
  }
}

function checkTagName(tag: string): void {
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(tag) || tag.startsWith('.') || tag.includes('..')) {
    throw invalidInput(`tag '${tag}' must be 1-128 characters of [A-Za-z0-9._-], not starting with '.'`);
  }
}

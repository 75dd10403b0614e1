import type { Table as LanceTable } from '@lancedb/lancedb';
import {
  BranchState,
  CatalogEvent,
  CreateTableBranch,
  ObjectId,
  PageRequest,
  TableState,
  branchLocation,
  branchesOf,
  decideCreateTableBranch,
  decideDeleteTableBranch,
  findLine,
  requireLine,
  requireTable,
  takePage,
} from '@app/catalog';
import { BranchRefFiles, LanceTables } from '@app/lance';
import { ProjectionRegistry } from '@app/projections';
import { TableFiles } from '@app/storage';
import { CatalogWriter } from './catalog-writer';
import { lanceInputError } from './lance-errors';
import { RequestContext } from './request-context';
import { stateFor } from './request-state';

type TableBranchCreated = Extract<CatalogEvent, { type: 'TableBranchCreated' }>;

/**
 * Branches of managed tables. The catalog records each branch and every version on it; Lance keeps
 * the branch's files (`tree/<name>/`) and its ref file (`_refs/branches/<name>.json`), which Lance
 * clients read to list branches themselves.
 *
 * CreateTableBranch records the branch first, then lets Lance make it through this catalog: Lance
 * commits the branch's first version as a `version/create` on it, which lands on the recorded
 * branch. If Lance fails, the branch is deleted again (recorded, and its files removed), so a
 * failed create leaves nothing behind.
 */
export class BranchService {
  private readonly refFiles: BranchRefFiles;

  constructor(
    private readonly writer: CatalogWriter,
    private readonly projections: ProjectionRegistry,
    private readonly lance: LanceTables,
    private readonly files: TableFiles,
    /** On an object store that refuses conditional PUTs, the catalog writes Lance's ref files itself. */
    private readonly writesRefFiles = false,
    /** Longer than a branch create takes, its Lance commit retries included (see completeRefFile). */
    private readonly createGraceMs = 120_000,
  ) {
    this.refFiles = new BranchRefFiles(files);
  }

  private async table(ctx: RequestContext, id: ObjectId): Promise<TableState> {
    return requireTable(await stateFor(this.projections, ctx), id);
  }

  async listTableBranches(ctx: RequestContext, id: ObjectId, page: PageRequest) {
    const table = await this.table(ctx, id);
    if (!table.managedVersioning) return this.listFromRefFiles(table, page);
    const names = branchesOf(table).filter((b) => page.pageToken === undefined || b.name > page.pageToken);
    const result = takePage(names, page.limit, (b) => b.name);
    const branches: Record<string, unknown> = {};
    for (const b of result.items) branches[b.name] = await this.contents(table, b);
    return { branches, page_token: result.pageToken };
  }

  /** An unmanaged table's clients make branches on storage alone: Lance's ref files are the list, as its manifests are its versions. */
  private async listFromRefFiles(table: TableState, page: PageRequest) {
    const listed = (await this.refFiles.list(table.location)).filter((b) => page.pageToken === undefined || b.name > page.pageToken);
    const result = takePage(listed, page.limit, (b) => b.name);
    return { branches: Object.fromEntries(result.items.map(({ name, ...contents }) => [name, contents])), page_token: result.pageToken };
  }

  /** BranchContents as the spec has it. */
  private async contents(table: TableState, b: BranchState) {
    const parentBranch = b.recordedBy === 'commit' ? await this.refFiles.parentOf(table.location, b.name) : b.parentBranch;
    // As Lance records it: the size of the manifest the branch started from.
    const parent = findLine(table, parentBranch);
    const started = parent?.versions.get(b.parentVersion) ?? b.versions.get(b.parentVersion);
    return {
      ...(parentBranch ? { parentBranch } : {}),
      parentVersion: b.parentVersion,
      createAt: Math.floor(b.createdAtMillis / 1000),
      manifestSize: started?.manifestSize ?? 0,
    };
  }

  async createTableBranch(ctx: RequestContext, cmd: CreateTableBranch) {
    let created: TableBranchCreated | undefined;
    let location = '';
    const recorded = await this.writer.execute(ctx, 'CreateTableBranch', (view) => {
      const events = decideCreateTableBranch(view, cmd);
      created = events[0] as TableBranchCreated;
      location = view.table(cmd.id)!.location;
      return { events, result: (transactionId) => ({ transaction_id: transactionId }) };
    });
    let source: LanceTable | undefined;
    try {
      source = await this.lance.open(ctx.database, [...cmd.id], cmd.fromBranch === undefined ? {} : { branch: cmd.fromBranch });
      (await (await source.branches()).create(cmd.name, cmd.fromBranch, created!.data.parentVersion)).close();
    } catch (e) {
      // The ref file could not be finished (the store went down meanwhile): the create is undone all
      // the same, and answered with what stopped it.
      let finishing: unknown;
      const finished = await this.finishRefFile(ctx, cmd).catch((f) => {
        finishing = f;
        return false;
      });
      if (finished) return recorded;
      await this.undoCreate(ctx, location, cmd);
      throw finishing ?? lanceInputError(e, 'creating the branch failed');
    } finally {
      source?.close();
    }
    return recorded;
  }

  /**
   * Lance committed the branch's first version through the catalog, then could not write its ref
   * file on a store that refuses conditional PUTs: the catalog writes it, as Lance would have.
   */
  private async finishRefFile(ctx: RequestContext, cmd: CreateTableBranch): Promise<boolean> {
    if (!this.writesRefFiles) return false;
    const table = await this.table(ctx, cmd.id);
    const line = table.branches?.get(cmd.name);
    return !!line && (await this.writeMissingRefFile(table, line));
  }

  /**
   * A branch CreateTableBranch recorded with its first version and no ref file: its create ended
   * before finishing it (its process killed, or the store and the event store down at once, so it
   * could neither write the file nor record the undo). Lance cannot open such a branch, which the
   * catalog lists: its ref file is written now, as the create would have. A younger branch than
   * `createGraceMs` is left to the create that may still be finishing it. Answers whether Lance can
   * work on the branch now: false while such a young branch has no ref file.
   */
  async completeRefFile(ctx: RequestContext, id: ObjectId, name: string, now = Date.now()): Promise<boolean> {
    if (!this.writesRefFiles) return true;
    const table = await this.table(ctx, id);
    const line = table.branches?.get(name);
    if (!line || line.recordedBy !== 'CreateTableBranch') return true;
    if (now - line.createdAtMillis < this.createGraceMs) return this.refFiles.exists(table.location, name);
    await this.writeMissingRefFile(table, line);
    return true;
  }

  /** Writes, as Lance would, the ref file of a branch whose first version is recorded and that has none; whether it wrote one. */
  private async writeMissingRefFile(table: TableState, line: BranchState): Promise<boolean> {
    if (line.latestVersion === undefined || (await this.refFiles.exists(table.location, line.name))) return false;
    const source = requireLine(table, line.parentBranch);
    await this.refFiles.write(table.location, line.name, {
      parentBranch: line.parentBranch,
      parentVersion: line.parentVersion,
      manifestSize: source.versions.get(line.parentVersion)?.manifestSize ?? line.versions.get(line.latestVersion)?.manifestSize ?? 0,
      createdAtMillis: line.createdAtMillis,
    });
    return true;
  }

  private async undoCreate(ctx: RequestContext, location: string, cmd: CreateTableBranch): Promise<void> {
    await this.writer
      .execute(ctx, 'DeleteTableBranch', (view) => ({ events: decideDeleteTableBranch(view, cmd.id, cmd.name), result: () => undefined }))
      .catch(() => undefined);
    await this.removeFiles(location, cmd.name).catch(() => undefined);
  }

  async deleteTableBranch(ctx: RequestContext, id: ObjectId, name: string) {
    let table: TableState | undefined;
    const answer = await this.writer.execute(ctx, 'DeleteTableBranch', (view) => {
      table = view.table(id);
      return { events: decideDeleteTableBranch(view, id, name), result: (transactionId) => ({ transaction_id: transactionId }) };
    });
    // Recorded first: a branch the catalog no longer lists takes no commits, so its files can go.
    await this.removeFiles(table!.location, name);
    return answer;
  }

  private async removeFiles(location: string, name: string): Promise<void> {
    await this.refFiles.remove(location, name);
    await this.files.removeTree(branchLocation(location, name));
  }
}

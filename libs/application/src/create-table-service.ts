import { CatalogError, ErrorCode, ObjectId, Properties } from '@app/catalog';
import { ArrowBody } from '@app/lance';
import { DataService } from './data-service';
import { RequestContext } from './request-context';
import { TableService } from './table-service';

export type CreateTableMode = 'Create' | 'ExistOk' | 'Overwrite';
export const CREATE_TABLE_MODES: readonly CreateTableMode[] = ['Create', 'ExistOk', 'Overwrite'];

/** CreateTable: declare (when new) and write the Arrow data, or keep or replace an existing table. */
export class CreateTableService {
  constructor(
    private readonly tables: TableService,
    private readonly data: DataService,
  ) {}

  async createTable(
    ctx: RequestContext,
    req: { id: ObjectId; mode: CreateTableMode; data: ArrowBody; location?: string; properties: Properties; storageOptions?: Record<string, string> },
  ) {
    const existing = await this.data.table(ctx, req.id).catch((e) => {
      if (e instanceof CatalogError && e.code === ErrorCode.TableNotFound) return undefined;
      throw e;
    });
    if (existing && req.mode === 'Create' && !(await this.data.isOnlyDeclared(existing))) {
      throw new CatalogError(ErrorCode.TableAlreadyExists, `table '${req.id.join(ctx.delimiter)}' already exists`);
    }
    if (existing && req.mode === 'ExistOk' && !(await this.data.isOnlyDeclared(existing))) {
      return {
        location: existing.location,
        version: existing.latestVersion,
        storage_options: await this.tables.storageOptions(ctx, existing),
        properties: existing.properties,
      };
    }
    let table = existing;
    if (!table) {
      await this.tables.declareTable(ctx, { id: req.id, location: req.location, properties: req.properties });
      table = await this.data.table(ctx, req.id);
    }
    let written;
    let storageOptions;
    try {
      // Vended before the data is written: when none can be had, nothing is.
      storageOptions = await this.tables.storageOptions(ctx, table);
      const overwrite = existing && req.mode === 'Overwrite';
      written = await this.data.writeFresh(ctx, table, req.data, overwrite ? 'overwrite' : 'create', existing ? 'Overwrite' : 'Create', req.storageOptions);
    } catch (e) {
      // Nothing half-written: a table this request declared goes again if its data cannot be written.
      if (!existing) await this.tables.dropTable(ctx, req.id).catch(() => undefined);
      throw e;
    }
    return { transaction_id: written.transactionId, location: table.location, version: written.version, storage_options: storageOptions, properties: table.properties };
  }
}

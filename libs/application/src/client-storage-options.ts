import type { TableState } from '@app/catalog';
import type { StorageOptions } from '@app/config';
import { CredentialVending, Warehouse, withoutCredentials } from '@app/storage';
import { RequestContext } from './request-context';

/**
 * The storage options a caller is answered for one table (DeclareTable, CreateTable,
 * DescribeTable, RegisterTable, a batch's declarations): the warehouse's own for the server's
 * calls and its workers, none on a local disk, otherwise what the vending port gives for the
 * table at the caller's level (read-only for read, read-write for write and admin).
 */
export class ClientStorageOptions {
  constructor(
    private readonly warehouse: Warehouse,
    private readonly vending: CredentialVending,
  ) {}

  /** At once where nothing is vended (the server's own calls, a local warehouse): DescribeTable's most frequent case. */
  forTable(ctx: RequestContext, table: VendedTable, vendCredentials = true): StorageOptions | Promise<StorageOptions> {
    if (ctx.service) {
      const own = this.warehouse.storageOptions(ctx.database, true);
      return vendCredentials ? own : withoutCredentials(own);
    }
    if (!this.warehouse.onObjectStore) return {};
    if (!vendCredentials) return this.vending.reach(ctx.database);
    return this.vending.vend({
      database: ctx.database,
      location: table.location,
      table: `${table.uuid}\u0000${table.id.join('\u0000')}`,
      access: ctx.level === 'write' || ctx.level === 'admin' ? 'write' : 'read',
    });
  }
}

/** What credentials are vended for: a table's location, and its incarnation (uuid and name). */
export type VendedTable = Pick<TableState, 'id' | 'uuid' | 'location'>;

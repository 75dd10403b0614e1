import type { StorageOptions } from '@app/config';
import { CredentialVending, VendRequest, withoutCredentials } from './credential-vending';
import type { Warehouse } from './warehouse';

/**
 * CLIENT_CREDENTIALS=static: every client of a database gets what the operator wrote for it
 * (CLIENT_STORAGE_OPTIONS and CLIENT_STORAGE_OPTIONS_BY_DATABASE), whatever the table or level.
 */
export class StaticCredentials implements CredentialVending {
  readonly kind = 'static';

  constructor(private readonly warehouse: Warehouse) {}

  vend(request: VendRequest): Promise<StorageOptions> {
    return Promise.resolve(this.warehouse.storageOptions(request.database, false));
  }

  reach(database: string): StorageOptions {
    return withoutCredentials(this.warehouse.storageOptions(database, false));
  }

  close(): void {}
}

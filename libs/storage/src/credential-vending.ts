import type { StorageOptions } from '@app/config';

/** Read-only or read-write: what a caller's level on the database allows on a table's files. */
export type VendedAccess = 'read' | 'write';

export interface VendRequest {
  database: string;
  /** The table's root location (`s3://bucket/key`): its branches' trees live under it. */
  location: string;
  access: VendedAccess;
  /**
   * The table's incarnation (its uuid and name): a session is never handed to another one, so a
   * table dropped, renamed or registered again gets none cached for what it was before.
   */
  table: string;
}

/**
 * The port for what clients are handed to reach one table's files. `static` answers the options an
 * operator configured; `sts` assumes a role with a session policy for the table's prefix. Google
 * Cloud Storage (downscoped tokens) and Azure (user delegation SAS) would be adapters of the same
 * port (docs/architecture.md).
 */
export interface CredentialVending {
  readonly kind: 'static' | 'sts';
  /** Lance storage options for the table: how to reach the store and the credentials. */
  vend(request: VendRequest): Promise<StorageOptions>;
  /** How a client of the database reaches the store, without any credential (`vend_credentials: false`). */
  reach(database: string): StorageOptions;
  /** What /readyz reports for the service vending depends on; absent when it depends on none. */
  readonly dependency?: { name: string; ping(): Promise<void> };
  /** Starts what the vending checks on its own (the STS chaining check); the API calls it once it serves. */
  start?(): void;
  close(): void;
}

/** Storage options that are credentials or say how long they last. */
export const CREDENTIAL_OPTIONS = /(access_key_id|secret_access_key|session_token|^token$|_token$|expires_at_millis|refresh_offset_millis|sas_|account_key|service_account)/;

export function withoutCredentials(options: StorageOptions): StorageOptions {
  return Object.fromEntries(Object.entries(options).filter(([k]) => !CREDENTIAL_OPTIONS.test(k)));
}

import { randomUUID } from 'node:crypto';
import {
  CatalogError,
  DATASET_DIRS,
  ErrorCode,
  describeLine,
  displayId,
  inDataset,
  lineLocation,
  manifestFile,
  requireLine,
  requireTable,
  storePathOf,
} from '@app/catalog';
import { ManifestFormatError, RewrittenManifest, SchemaMetadataVersion, readSchemaMetadata, schemaMetadataVersion } from '@app/lance';
import { ProjectionRegistry } from '@app/projections';
import { TableFiles } from '@app/storage';
import type { OnTable } from './data-mutation-service';
import { RequestContext } from './request-context';
import { VersionService } from './version-service';
import { stateFor } from './request-state';

/** How many times a change is made again on the new latest version when another commit took its version. */
const ATTEMPTS = 5;

/** What TableDataChanged records; the transaction's operation is `UpdateSchemaMetadataTable`. */
export const SCHEMA_METADATA_CHANGE = 'UpdateSchemaMetadata';

export interface SchemaMetadataUpdated {
  /** The schema metadata of the new version, as its manifest holds it. */
  metadata: Record<string, string>;
  version: number;
  /** The transaction of the change's TableDataChanged. */
  transactionId: string;
}

/**
 * UpdateTableSchemaMetadata. Lance's JS library has no call for it, and with managed versioning the
 * catalog is the table's manifest store, so the catalog makes the version itself: the latest
 * manifest with its schema metadata replaced, written in Lance's own layout with the transaction
 * Lance would have written (see `schemaMetadataVersion`), staged in the line's `_versions/` under
 * Lance's staging name and committed through `version/create`'s own path.
 */
export class SchemaMetadataService {
  constructor(
    private readonly projections: ProjectionRegistry,
    private readonly versions: VersionService,
    private readonly files: TableFiles,
  ) {}

  /** Replaces the schema metadata of the line's latest version with `metadata`, in a new version. */
  async update(ctx: RequestContext, target: OnTable, metadata: Record<string, string>): Promise<SchemaMetadataUpdated> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(ctx, target, metadata);
      } catch (e) {
        // Another writer committed the version this change was made for: make it again on theirs.
        if (!(e instanceof CatalogError && e.code === ErrorCode.ConcurrentModification) || attempt >= ATTEMPTS) throw e;
        await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
      }
    }
  }

  private async attempt(ctx: RequestContext, target: OnTable, metadata: Record<string, string>): Promise<SchemaMetadataUpdated> {
    const view = await stateFor(this.projections, ctx);
    const table = requireTable(view, target.id);
    if (!table.managedVersioning) {
      throw new CatalogError(
        ErrorCode.Unsupported,
        `table '${displayId(table.id)}' does not use managed versioning: its clients commit its versions to storage themselves, so the catalog cannot commit one for it`,
        'Update the schema metadata with a Lance client, or use a table declared with managed versioning.',
      );
    }
    const line = requireLine(table, target.branch);
    const latest = line.latestVersion;
    if (latest === undefined) throw new CatalogError(ErrorCode.InvalidTableState, 'the table is declared but holds no data yet; insert data first');
    const record = line.versions.get(latest)!;
    // On an object store the latest version's final manifest may still be waiting for its copy.
    await this.versions.published(table.location, [record]);
    const location = lineLocation(line);
    const current = await this.files.read(manifestFile(location, latest, record.namingScheme));
    if (!current) {
      throw new CatalogError(ErrorCode.InvalidTableState, `the manifest of version ${latest} of ${describeLine(line)} is missing from storage`);
    }
    const version = latest + 1;
    const timestampMillis = Date.now();
    const next = nextVersion(current, { version, timestampMillis, metadata, transactionUuid: randomUUID() }, () => `the manifest of version ${latest} of ${describeLine(line)}`);
    // Lance's names: the transaction in the line's `_transactions/`, the staging manifest beside its final name.
    const transactionPath = inDataset(location, DATASET_DIRS.transactions, next.transactionFile);
    const staging = `${manifestFile(location, version, record.namingScheme)}-${randomUUID()}`;
    await this.files.write(transactionPath, next.transaction);
    await this.files.write(staging, next.manifest);
    try {
      const committed = await this.versions.commitStagedChange(
        ctx,
        {
          id: target.id,
          ...(target.branch !== undefined ? { branch: target.branch } : {}),
          version,
          stagingManifestPath: storePathOf(staging),
          manifestSize: next.manifest.length,
          namingScheme: record.namingScheme,
          timestampMillis,
        },
        SCHEMA_METADATA_CHANGE,
      );
      return { metadata: readSchemaMetadata(next.manifest), version: committed.version.version, transactionId: committed.change_transaction_id };
    } catch (e) {
      // Refused, so not recorded: nothing names these files (the commit removed a final manifest it
      // made). Where the outcome is unknown (a store unreachable) they stay, in case it was recorded.
      if (e instanceof CatalogError && e.code !== ErrorCode.ServiceUnavailable) {
        await Promise.all([this.files.remove(staging), this.files.remove(transactionPath)].map((p) => p.catch(() => undefined)));
      }
      throw e;
    }
  }
}

/** The next version's files; a manifest Lance could not read either is the table's problem, not the request's. */
function nextVersion(current: Buffer, next: SchemaMetadataVersion, what: () => string): RewrittenManifest {
  try {
    return schemaMetadataVersion(current, next);
  } catch (e) {
    if (!(e instanceof ManifestFormatError)) throw e;
    throw new CatalogError(ErrorCode.InvalidTableState, `${what()} cannot be read: ${e.message}`);
  }
}

import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { readdir } from 'node:fs/promises';
import type { AppConfig } from '@app/config';
import { isS3Uri, joinLocation, parseS3Uri } from '@app/storage';

/**
 * The folders directly inside a warehouse folder: what verify and recover walk. The warehouse's own
 * file interface lists files only; on an object store a folder is a common key prefix.
 */
export class WarehouseFolders {
  private readonly s3?: S3Client;

  constructor(config: AppConfig) {
    const s3 = config.objectStore;
    if (s3) this.s3 = new S3Client({ region: s3.region, endpoint: s3.endpoint, forcePathStyle: s3.forcePathStyle, credentials: s3.credentials });
  }

  /** Names of the folders inside `location`, sorted; empty when it does not exist. */
  async list(location: string): Promise<string[]> {
    if (!isS3Uri(location)) {
      try {
        return (await readdir(location, { withFileTypes: true }))
          .filter((e) => e.isDirectory())
          .map((e) => e.name)
          .sort();
      } catch (e) {
        if ((e as { code?: string }).code === 'ENOENT' || (e as { code?: string }).code === 'ENOTDIR') return [];
        throw e;
      }
    }
    const { bucket, key } = parseS3Uri(joinLocation(location, ''));
    const prefix = key.endsWith('/') || key === '' ? key : `${key}/`;
    const names: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.s3!.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, Delimiter: '/', ContinuationToken: token }));
      for (const p of page.CommonPrefixes ?? []) if (p.Prefix) names.push(p.Prefix.slice(prefix.length).replace(/\/$/, ''));
      token = page.NextContinuationToken;
    } while (token);
    return names.sort();
  }

  close(): void {
    this.s3?.destroy();
  }
}

import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { AppConfig } from '@app/config';
import { isS3Uri, parseS3Uri } from '@app/storage';
import { CommandFailure, EXIT } from './exit-codes';

/**
 * An archive is a local file or an `s3://bucket/key` object, reached with the warehouse's S3
 * settings. An object is staged in a local temporary file (written whole, then uploaded; downloaded
 * whole, then read), so an archive is only ever read or written as a stream.
 */
export async function withStagedArchive<T>(location: string, config: AppConfig, mode: 'read' | 'write', work: (file: string) => Promise<T>): Promise<T> {
  if (!isS3Uri(location)) return work(location);
  const client = s3ClientOf(config);
  const { bucket, key } = parseS3Uri(location);
  const dir = await mkdtemp(join(tmpdir(), 'lance-catalog-archive-'));
  const file = join(dir, 'archive.ndjson.gz');
  try {
    if (mode === 'read') {
      const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      await pipeline(got.Body as Readable, createWriteStream(file));
    }
    const result = await work(file);
    if (mode === 'write') {
      const { size } = await stat(file);
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: createReadStream(file), ContentLength: size, ContentType: 'application/gzip' }));
    }
    return result;
  } finally {
    client.destroy();
    await rm(dir, { recursive: true, force: true });
  }
}

function s3ClientOf(config: AppConfig): S3Client {
  const s3 = config.objectStore;
  if (!s3) throw new CommandFailure(EXIT.usage, 'an s3:// archive is reached with the warehouse\'s S3 settings: set WAREHOUSE to an s3:// location and its AWS_* settings');
  // A checksum computed only where S3 requires one: with a streamed body the SDK would otherwise
  // send it aws-chunked, which S3-compatible stores such as Swift refuse.
  return new S3Client({
    region: s3.region,
    endpoint: s3.endpoint,
    forcePathStyle: s3.forcePathStyle,
    credentials: s3.credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

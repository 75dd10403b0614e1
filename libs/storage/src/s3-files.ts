import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { parseS3Uri } from './object-uri';
import { FileInfo, ListedFile, NameSelector, StorageUnavailableError, TableFiles } from './table-files';
import { withoutTrailingSlashes } from '@app/catalog';

/** How this process reaches the object store (from AWS_* and WAREHOUSE_STORAGE_OPTIONS). */
export interface S3Settings {
  region: string;
  endpoint?: string;
  forcePathStyle: boolean;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

/** Table files on S3 or an S3-compatible store (MinIO, Ceph, Swift's s3api...). */
export class S3Files implements TableFiles {
  private readonly client: S3Client;
  private batchDeletes = true;

  constructor(settings: S3Settings) {
    this.client = new S3Client({
      region: settings.region,
      endpoint: settings.endpoint,
      forcePathStyle: settings.forcePathStyle,
      credentials: settings.credentials,
      // An unreachable store answers 503 within seconds rather than after the SDK's long default waits.
      maxAttempts: 2,
      requestHandler: new NodeHttpHandler({ connectionTimeout: 3000, requestTimeout: 30_000 }),
    });
  }

  async read(uri: string): Promise<Buffer | undefined> {
    const { bucket, key } = parseS3Uri(uri);
    try {
      const got = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return Buffer.from(await got.Body!.transformToByteArray());
    } catch (e) {
      if (notFound(e)) return undefined;
      throw unavailable(e, `reading ${uri}`);
    }
  }

  async readRange(uri: string, offset: number, length: number): Promise<Buffer> {
    const { bucket, key } = parseS3Uri(uri);
    try {
      const got = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${offset}-${offset + length - 1}` }));
      return Buffer.from(await got.Body!.transformToByteArray());
    } catch (e) {
      throw unavailable(e, `reading ${uri}`);
    }
  }

  async readTail(uri: string, length: number): Promise<{ bytes: Buffer; info: FileInfo } | undefined> {
    const { bucket, key } = parseS3Uri(uri);
    try {
      const got = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=-${length}` }));
      const bytes = Buffer.from(await got.Body!.transformToByteArray());
      // `bytes first-last/size`; a store that ignores the range answers the whole object.
      const size = Number(/\/(\d+)$/.exec(got.ContentRange ?? '')?.[1] ?? bytes.length);
      return { bytes, info: { size, eTag: got.ETag, modifiedMillis: got.LastModified?.getTime() ?? 0 } };
    } catch (e) {
      if (notFound(e)) return undefined;
      // An empty object has no last byte to range over.
      if (e instanceof S3ServiceException && e.$metadata.httpStatusCode === 416) {
        const info = await this.head(uri);
        return info && { bytes: Buffer.alloc(0), info };
      }
      throw unavailable(e, `reading ${uri}`);
    }
  }

  async head(uri: string): Promise<FileInfo | undefined> {
    const { bucket, key } = parseS3Uri(uri);
    try {
      const info = await this.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return { size: info.ContentLength ?? 0, eTag: info.ETag, modifiedMillis: info.LastModified?.getTime() ?? 0 };
    } catch (e) {
      if (notFound(e)) return undefined;
      throw unavailable(e, `reading ${uri}`);
    }
  }

  async write(uri: string, bytes: Uint8Array): Promise<void> {
    const { bucket, key } = parseS3Uri(uri);
    try {
      await this.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }));
    } catch (e) {
      throw unavailable(e, `writing ${uri}`);
    }
  }

  /** The copy's own answer carries its entity tag: no request to read it back. */
  async copy(from: string, to: string): Promise<{ eTag?: string }> {
    const source = parseS3Uri(from);
    const target = parseS3Uri(to);
    try {
      const copied = await this.client.send(
        new CopyObjectCommand({ Bucket: target.bucket, Key: target.key, CopySource: `${source.bucket}/${encodeURIComponent(source.key).replace(/%2F/g, '/')}` }),
      );
      return { eTag: copied.CopyObjectResult?.ETag ?? (await this.head(to))?.eTag };
    } catch (e) {
      if (e instanceof StorageUnavailableError) throw e;
      throw unavailable(e, `copying ${from} to ${to}`);
    }
  }

  /** A listing gives every file's attributes with its name: `select` only filters it. */
  async list(directory: string, select?: NameSelector): Promise<ListedFile[]> {
    const { bucket, key } = parseS3Uri(directory);
    const prefix = `${withoutTrailingSlashes(key)}/`;
    const listed: ListedFile[] = [];
    let token: string | undefined;
    try {
      do {
        const page = await this.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, Delimiter: '/', ContinuationToken: token }));
        for (const o of page.Contents ?? []) {
          if (!o.Key || o.Key === prefix) continue;
          listed.push({ name: o.Key.slice(prefix.length), size: o.Size ?? 0, eTag: o.ETag, modifiedMillis: o.LastModified?.getTime() ?? 0 });
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    } catch (e) {
      throw unavailable(e, `listing ${directory}`);
    }
    if (!select) return listed;
    const picked = select(listed.map((file) => file.name));
    return listed.filter((file) => picked.has(file.name));
  }

  /** A listing gives the sizes with the names: the same requests as `list`. */
  async names(directory: string): Promise<readonly string[]> {
    return (await this.list(directory)).map((file) => file.name);
  }

  async remove(uri: string): Promise<void> {
    const { bucket, key } = parseS3Uri(uri);
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    } catch (e) {
      if (notFound(e)) return;
      throw unavailable(e, `deleting ${uri}`);
    }
  }

  async removeTree(directory: string): Promise<number> {
    const { bucket, key } = parseS3Uri(directory);
    const prefix = `${withoutTrailingSlashes(key)}/`;
    let removed = 0;
    try {
      for (;;) {
        // Listed again after each batch: what was deleted is gone from the next page.
        const page = await this.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, MaxKeys: 1000 }));
        const keys = (page.Contents ?? []).map((o) => o.Key!).filter(Boolean);
        if (keys.length === 0) return removed;
        await this.removeKeys(bucket, keys);
        removed += keys.length;
      }
    } catch (e) {
      if (e instanceof StorageUnavailableError) throw e;
      throw unavailable(e, `deleting under ${directory}`);
    }
  }

  /**
   * One DeleteObjects request per page where the store takes it; some stores (Swift) want a
   * Content-MD5 the SDK no longer sends, and then every key is deleted on its own.
   */
  private async removeKeys(bucket: string, keys: string[]): Promise<void> {
    if (this.batchDeletes) {
      try {
        const result = await this.client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }));
        if (result.Errors?.length) throw new Error(`deleting ${result.Errors[0].Key}: ${result.Errors[0].Message}`);
        return;
      } catch (e) {
        const status = e instanceof S3ServiceException ? e.$metadata.httpStatusCode : undefined;
        if (status !== 400 && status !== 501) throw e;
        this.batchDeletes = false;
      }
    }
    for (let from = 0; from < keys.length; from += 16) {
      await Promise.all(keys.slice(from, from + 16).map((Key) => this.client.send(new DeleteObjectCommand({ Bucket: bucket, Key }))));
    }
  }

  /** Answers when the bucket can be reached with this process's credentials. */
  async ping(bucket: string): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: bucket }));
    } catch (e) {
      if (e instanceof S3ServiceException && (e.$metadata.httpStatusCode ?? 500) < 500) {
        throw new StorageUnavailableError(`bucket '${bucket}' answered ${e.$metadata.httpStatusCode} (${e.name}): check it exists and the credentials may use it`);
      }
      throw unavailable(e, `reaching bucket '${bucket}'`);
    }
  }

  /** Whether the store honours `If-None-Match: *` on PUT (Lance's own commits need it). */
  async supportsConditionalPut(probeUri: string): Promise<boolean> {
    const { bucket, key } = parseS3Uri(probeUri);
    try {
      await this.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'probe', IfNoneMatch: '*' }));
      await this.remove(probeUri);
      return true;
    } catch (e) {
      const status = e instanceof S3ServiceException ? e.$metadata.httpStatusCode : undefined;
      if (status === 501 || status === 400) return false;
      if (status === 412) return true;
      throw unavailable(e, `probing ${probeUri}`);
    }
  }

  close(): void {
    this.client.destroy();
  }
}

function notFound(e: unknown): boolean {
  return e instanceof S3ServiceException && (e.$metadata.httpStatusCode === 404 || e.name === 'NoSuchKey' || e.name === 'NotFound');
}

/** Network failures and server errors mean "try again later"; a refusal (4xx) is a real error. */
function unavailable(e: unknown, what: string): Error {
  if (e instanceof S3ServiceException && (e.$metadata.httpStatusCode ?? 500) < 500) {
    return new Error(`${what}: ${e.name} (${e.$metadata.httpStatusCode}): ${e.message}`);
  }
  return new StorageUnavailableError(`the object store is unavailable (${what}): ${(e as Error).message || (e as Error).name}`, e);
}

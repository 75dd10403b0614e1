import Fastify from 'fastify';
import { closeSync, fdatasyncSync, linkSync, mkdirSync, openSync, readFileSync, writevSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { finalManifestName } from '@app/catalog';
import { S3Files } from '@app/storage';

/**
 * The least a managed-versioning catalog of this design can do for the lancedb client, as a
 * baseline measured in the same run: the calls the client makes (declare, describe, version/list,
 * version/create), answered from memory, with the one thing the design requires of every commit: a
 * durable write (one line appended to a log and fdatasync'd) before the answer, and the staging
 * manifest linked to its final name. No validation, no events, no auth, no logging, no
 * metrics, no history: a lower bound for this catalog, not a catalog.
 *
 * Two lower bounds, by what the durable write holds:
 * - `journaled` (what this catalog guarantees): the manifest's bytes ride in the same write as the
 *   version's record, as the catalog's journal does, so a version that survives a crash has its
 *   manifest. The client wrote the staging manifest without a sync.
 * - `record-only`: the version's record alone. Cheaper, but after a crash a recorded version may
 *   name a manifest whose content never reached the disk; no catalog that promises otherwise can
 *   do this.
 *
 * On an object store (`<warehouse>` an `s3://bucket/prefix`, reached with the AWS_* variables) the
 * manifest is copied to its final name with a server-side copy, durable once answered, and the
 * durable line holds the record alone; declare and describe answer the storage options the client
 * needs (the same credentials).
 *
 * Usage: node floor-catalog.js <warehouse dir | s3://bucket/prefix> [journaled|record-only] [log dir];
 * prints "listening on <url>".
 */
interface Version {
  version: number;
  manifest_path: string;
  manifest_size?: number;
}

const root = process.argv[2];
const manifests = process.argv[3] ?? 'journaled';
if (!root || !['journaled', 'record-only'].includes(manifests)) throw new Error('usage: floor-catalog <warehouse dir> [journaled|record-only]');
const s3 = root.startsWith('s3://')
  ? new S3Files({
      region: process.env.AWS_REGION ?? 'us-east-1',
      endpoint: process.env.AWS_ENDPOINT_URL,
      forcePathStyle: true,
      credentials: { accessKeyId: process.env.AWS_ACCESS_KEY_ID!, secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY! },
    })
  : undefined;
const storageOptions = s3
  ? {
      aws_endpoint: process.env.AWS_ENDPOINT_URL!,
      aws_region: process.env.AWS_REGION ?? 'us-east-1',
      aws_access_key_id: process.env.AWS_ACCESS_KEY_ID!,
      aws_secret_access_key: process.env.AWS_SECRET_ACCESS_KEY!,
      allow_http: 'true',
      aws_virtual_hosted_style_request: 'false',
    }
  : {};
const logDir = s3 ? process.argv[4] : root;
if (!logDir) throw new Error('usage: floor-catalog s3://bucket/prefix record-only <log dir>');
mkdirSync(logDir, { recursive: true });
const log = openSync(join(logDir, 'commits.log'), 'a');
const bucket = s3 ? /^s3:\/\/([^/]+)/.exec(root)![1] : '';
const tables = new Map<string, { location: string; versions: Version[] }>();

/** The design's one cost per commit: a record (and, journaled, the bytes after it) made durable before the answer. */
function durable(record: object, bytes?: Buffer): void {
  const line = Buffer.from(`${JSON.stringify(bytes ? { ...record, bytes: bytes.length } : record)}\n`);
  writevSync(log, bytes ? [line, bytes] : [line]);
  fdatasyncSync(log);
}

async function main(): Promise<void> {
  const app = Fastify({ logger: false });
  // version/list sends the literal body `null`.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, body === '' ? undefined : JSON.parse(body as string));
    } catch (e) {
      done(e as Error, undefined);
    }
  });
  const key = (id: string) => id.replace(/\$/g, '/');

  app.post('/v1/namespace/:id/create', async () => ({}));
  app.post<{ Params: { id: string } }>('/v1/table/:id/declare', async (req) => {
    const name = key(req.params.id);
    const location = s3 ? `${root}/${name}.lance` : join(root, `${name}.lance`);
    durable({ declare: name, location });
    tables.set(name, { location, versions: [] });
    return { location, managed_versioning: true, storage_options: storageOptions };
  });
  app.post<{ Params: { id: string } }>('/v1/table/:id/describe', async (req, reply) => {
    const table = tables.get(key(req.params.id));
    if (!table) return reply.code(404).send({ error: 'table not found', code: 4 });
    return { location: table.location, managed_versioning: true, storage_options: storageOptions };
  });
  app.post<{ Params: { id: string } }>('/v1/table/:id/version/list', async (req) => {
    const versions = tables.get(key(req.params.id))?.versions ?? [];
    return { versions: versions.length ? [versions[versions.length - 1]] : [] };
  });
  app.post<{ Params: { id: string }; Body: { version: number; manifest_path: string; manifest_size?: number } }>(
    '/v1/table/:id/version/create',
    async (req, reply) => {
      const table = tables.get(key(req.params.id));
      if (!table) return reply.code(404).send({ error: 'table not found', code: 4 });
      const { version, manifest_path: staging, manifest_size } = req.body;
      if (table.versions.some((v) => v.version === version)) return reply.code(409).send({ error: `version ${version} exists`, code: 14 });
      const finalPath = join(dirname(staging), finalManifestName(version, 'V2'));
      if (s3) await s3.copy(`s3://${bucket}/${staging}`, `s3://${bucket}/${finalPath}`);
      const bytes = manifests === 'journaled' && !s3 ? readFileSync(`/${staging}`) : undefined;
      if (!s3) linkSync(`/${staging}`, `/${finalPath}`);
      const recorded = { version, manifest_path: finalPath, manifest_size };
      durable({ table: req.params.id, ...recorded }, bytes);
      table.versions.push(recorded);
      return { version: recorded };
    },
  );

  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address() as { port: number };
  console.log(`listening on http://127.0.0.1:${address.port}`);
  process.once('SIGTERM', () => {
    closeSync(log);
    process.exit(0);
  });
}

void main();

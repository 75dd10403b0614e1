import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * What the console's pages may do: its own scripts and styles only (no inline script, no eval), and
 * requests to this server only. Names and values are rendered as text, so this is the second line.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

interface ConsoleFile {
  type: string;
  body: Buffer;
  gzipped?: Buffer;
  etag: string;
  /** Vite names assets by their content: they never change under one name. */
  immutable: boolean;
}

/**
 * Serves the console (`npm run build` puts it in dist/console) at `/ui`. The few files are read
 * into memory at start-up, with a gzipped copy of those worth compressing, so a request never
 * touches the disk and no path a caller sends can name a file outside what was built.
 */
export function installConsolePages(fastify: FastifyInstance): void {
  const dir = consoleDir();
  const files = dir ? readConsole(dir) : new Map<string, ConsoleFile>();
  const serve = (path: string) => (request: FastifyRequest, reply: FastifyReply) => {
    const file = files.get(path || 'index.html');
    if (!file) {
      if (files.size === 0) {
        return reply.code(503).send({ error: 'the console is not built: run npm run build', code: 17 });
      }
      return reply.callNotFound();
    }
    void reply
      .header('content-type', file.type)
      .header('content-security-policy', CONSOLE_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .header('etag', file.etag)
      .header('vary', 'accept-encoding');
    if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
    if (file.gzipped && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
      return reply.header('content-encoding', 'gzip').send(file.gzipped);
    }
    return reply.send(file.body);
  };
  fastify.get('/ui', serve(''));
  fastify.get('/ui/*', (request, reply) => serve((request.params as { '*': string })['*'])(request, reply));
}

function readConsole(dir: string): Map<string, ConsoleFile> {
  const files = new Map<string, ConsoleFile>();
  for (const path of walk(dir)) {
    const name = relative(dir, path).split(sep).join('/');
    const body = readFileSync(path);
    const type = TYPES[extname(name)] ?? 'application/octet-stream';
    const compressible = /^(text\/|image\/svg|application\/json)/.test(type) && body.length > 1024;
    files.set(name, {
      type,
      body,
      gzipped: compressible ? gzipSync(body, { level: 9 }) : undefined,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
      immutable: name.startsWith('assets/'),
    });
  }
  return files;
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

/** dist/console beside the compiled server (dist/apps/...) or the sources (apps/...). */
function consoleDir(): string | undefined {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const candidate = join(dir, 'dist/console');
    if (existsSync(join(candidate, 'index.html'))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

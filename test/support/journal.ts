import Database from 'better-sqlite3';
import { join } from 'node:path';

/** Paths of the manifests the embedded store in `dataDir` still journals (not yet synced on disk), oldest first. */
export function journaledPaths(dataDir: string): string[] {
  const db = new Database(join(dataDir, 'events.sqlite3'), { readonly: true });
  try {
    return (db.prepare('SELECT path FROM file_journal ORDER BY id').all() as Array<{ path: string }>).map((r) => r.path);
  } finally {
    db.close();
  }
}

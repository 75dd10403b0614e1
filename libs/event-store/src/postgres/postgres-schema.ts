/**
 * The PostgreSQL store's tables, created or brought up to date at start-up (idempotent, under an
 * advisory lock so that processes starting together do not trip over each other):
 *
 * - `lance_catalog_events`: one row per event. `position` (bigserial) is the global order,
 *   `(stream_id, revision)` is unique, `data` and `metadata` are the events' JSON as written
 *   (text: read back byte for byte), `created` the commit's time.
 * - `lance_catalog_streams`: each stream's last revision, the row an append checks and moves.
 * - `lance_catalog_schema`: the layout's version.
 */
export const POSTGRES_SCHEMA = `
  CREATE TABLE IF NOT EXISTS lance_catalog_schema (version integer NOT NULL);
  CREATE TABLE IF NOT EXISTS lance_catalog_events (
    position bigserial PRIMARY KEY,
    stream_id text NOT NULL,
    revision integer NOT NULL,
    id text NOT NULL,
    type text NOT NULL,
    data text NOT NULL,
    metadata text NOT NULL,
    created timestamptz NOT NULL DEFAULT now(),
    UNIQUE (stream_id, revision)
  );
  CREATE TABLE IF NOT EXISTS lance_catalog_streams (
    stream_id text PRIMARY KEY,
    revision integer NOT NULL
  );
  INSERT INTO lance_catalog_schema (version) SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM lance_catalog_schema);
`;

/** A connection string fit for logs: the password replaced. */
export function redactedUrl(url: string): string {
  return url.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@');
}

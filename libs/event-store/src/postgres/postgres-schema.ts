/**
 * The PostgreSQL store's tables, created or brought up to date at start-up (idempotent, under an
 * advisory lock so that processes starting together do not trip over each other):
 *
 * - `lance_catalog_events`: one row per event. `position` (bigserial) is the global order,
 *   `(stream_id, revision)` is unique, `data` and `metadata` are the events' JSON as written
 *   (text: read back byte for byte), `created` the commit's time.
 * - `lance_catalog_streams`: each stream's last revision, the row an append checks and moves.
 * - `lance_catalog_schema`: the layout's version.
 * - `lance_catalog_append(...)`: one append, whole, inside PostgreSQL (see APPEND_STATEMENT).
 */
/** Appends take this transaction-level advisory lock: positions then commit in their own order. */
export const APPEND_LOCK = 7_311_624_091;
/** The channel appends NOTIFY with the last position they wrote. */
export const CHANNEL = 'lance_catalog_events';

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
  CREATE OR REPLACE FUNCTION lance_catalog_append(
    p_stream text, p_expected text, p_ids text[], p_types text[], p_data text[], p_metadata text[],
    OUT o_position bigint, OUT o_revision integer
  ) LANGUAGE plpgsql AS $fn$
  DECLARE
    v_current integer;
    v_expected integer;
  BEGIN
    PERFORM pg_advisory_xact_lock(${APPEND_LOCK});
    SELECT revision INTO v_current FROM lance_catalog_streams WHERE stream_id = p_stream;
    v_current := coalesce(v_current, -1);
    v_expected := CASE p_expected WHEN 'any' THEN v_current WHEN 'no_stream' THEN -1 ELSE p_expected::integer END;
    IF v_current <> v_expected THEN
      o_position := NULL;
      o_revision := v_current;
      RETURN;
    END IF;
    WITH inserted AS (
      INSERT INTO lance_catalog_events (stream_id, revision, id, type, data, metadata)
        SELECT p_stream, v_current + e.n::integer, e.i, e.t, e.d, e.m
        FROM unnest(p_ids, p_types, p_data, p_metadata) WITH ORDINALITY AS e(i, t, d, m, n)
        RETURNING position
    ) SELECT max(position) INTO o_position FROM inserted;
    o_revision := v_current + cardinality(p_ids);
    INSERT INTO lance_catalog_streams (stream_id, revision) VALUES (p_stream, o_revision)
      ON CONFLICT (stream_id) DO UPDATE SET revision = EXCLUDED.revision;
    PERFORM pg_notify('${CHANNEL}', o_position::text);
  END
  $fn$;
`;

/**
 * Why appends run as one statement of that function rather than a transaction the process drives:
 * the append lock is held only while PostgreSQL itself works. A transaction driven statement by
 * statement holds it across the process's round trips, so a process paused in the middle (a stop,
 * a long collection, a frozen machine) stops every other process's appends until it runs again.
 */
export const APPEND_STATEMENT = 'SELECT o_position, o_revision FROM lance_catalog_append($1, $2, $3::text[], $4::text[], $5::text[], $6::text[])';

/** A connection string fit for logs: the password replaced. */
export function redactedUrl(url: string): string {
  return url.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@');
}

/**
 * What a call can leave in a PostgreSQL session that its transaction's end does not undo, and
 * the statements that undo it (DISCARD ALL's parts that may run inside a transaction block, plus
 * the role): they run right after the call's COMMIT or ROLLBACK, before the connection is
 * returned to its pool. Session settings (`set_config(..., false)` in a committed write),
 * cursors WITH HOLD, `PREPARE`d statements, `LISTEN`, session advisory locks, temporary tables
 * and sequence caches. Names are schema-qualified: the statement may have moved `search_path`.
 */
export const CLEANUP_STATEMENTS: readonly string[] = [
  'CLOSE ALL',
  'SET SESSION AUTHORIZATION DEFAULT',
  'RESET ALL',
  'RESET ROLE',
  'DEALLOCATE ALL',
  'UNLISTEN *',
  'SELECT pg_catalog.pg_advisory_unlock_all()',
  'DISCARD TEMP',
  'DISCARD SEQUENCES',
];

/**
 * A statement answering one row, one boolean: is dblink or postgres_fdw installed in this
 * database? Their connections to other sessions (dblink's named and unnamed ones, postgres_fdw's
 * cached one per server and user mapping) outlive transactions and are closed by
 * `REMOTE_DISCONNECT_ALL` only where one is, so that databases without them pay nothing more.
 */
export const REMOTE_LINKS_PRESENT = "SELECT EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname IN ('dblink', 'postgres_fdw'))";

/**
 * Closes every dblink connection the session holds, named (`dblink_get_connections()`) and
 * unnamed (`dblink_disconnect()` fails when there is none; that failure is expected), and every
 * postgres_fdw connection (`postgres_fdw_disconnect_all()`, PostgreSQL 14 and later; a
 * connection a transaction still uses is kept, so this runs after the call's transaction ends).
 * A role that may not call these functions cannot have opened a connection through them either.
 */
export const REMOTE_DISCONNECT_ALL = `DO $hanactl$
DECLARE s text; c text;
BEGIN
  SELECT n.nspname INTO s FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'dblink';
  IF s IS NOT NULL THEN
    BEGIN
      FOR c IN EXECUTE pg_catalog.format('SELECT pg_catalog.unnest(%I.dblink_get_connections())', s) LOOP
        EXECUTE pg_catalog.format('SELECT %I.dblink_disconnect($1)', s) USING c;
      END LOOP;
      BEGIN
        EXECUTE pg_catalog.format('SELECT %I.dblink_disconnect()', s);
      EXCEPTION WHEN OTHERS THEN NULL;
      END;
    EXCEPTION WHEN insufficient_privilege THEN NULL;
    END;
  END IF;
  SELECT n.nspname INTO s FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'postgres_fdw';
  IF s IS NOT NULL THEN
    BEGIN
      EXECUTE pg_catalog.format('SELECT %I.postgres_fdw_disconnect_all()', s);
    EXCEPTION WHEN insufficient_privilege OR undefined_function THEN NULL;
    END;
  END IF;
END $hanactl$`;

import { randomFraction } from '../../../shared/random-hex.js';

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
export const REMOTE_LINKS_PRESENT =
  "SELECT EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) ANY ('{dblink,postgres_fdw}'::pg_catalog.name[]))";

/**
 * Closes every dblink connection the session holds, named (`dblink_get_connections()`) and
 * unnamed (`dblink_disconnect()` fails when there is none; that failure is expected), and every
 * postgres_fdw connection (`postgres_fdw_disconnect_all()`, PostgreSQL 14 and later; a
 * connection a transaction still uses is kept, so this runs after the call's transaction ends).
 * A role that may not call these functions cannot have opened a connection through them either.
 * The block first pins search_path to pg_catalog for its own transaction, so that nothing it
 * names (a variable's type, an operator, a function) resolves to a person's object of that name.
 */
export const REMOTE_DISCONNECT_ALL = `DO $hanactl$
DECLARE s pg_catalog.text; c pg_catalog.text;
BEGIN
  PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
  SELECT n.nspname INTO s FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace WHERE e.extname OPERATOR(pg_catalog.=) 'dblink';
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
  SELECT n.nspname INTO s FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace WHERE e.extname OPERATOR(pg_catalog.=) 'postgres_fdw';
  IF s IS NOT NULL THEN
    BEGIN
      EXECUTE pg_catalog.format('SELECT %I.postgres_fdw_disconnect_all()', s);
    EXCEPTION WHEN insufficient_privilege OR undefined_function THEN NULL;
    END;
  END IF;
END $hanactl$`;

/** A seed in [-1, 1) from the system's random source, as a numeric literal. */
export function freshSeed(): string {
  return String(randomFraction() * 2 - 1);
}

/**
 * The clean-up of a call that did not end cleanly (a failed step, a cut at the result cap, a
 * timeout or cancel, a refusal), as ONE simple-query message: `ROLLBACK` of whatever the call
 * left open, then every part of the clean-up (CLEANUP_STATEMENTS, a fresh seed, dblink and
 * postgres_fdw connections closed) in a transaction block of its own.
 *
 * One message, because behind a transaction pooler (PgBouncer in transaction mode) the client
 * keeps the server backend its call ran on only until that backend is ready for a new message
 * outside any transaction: a `ROLLBACK` sent alone hands the backend to the next client, and a
 * clean-up sent after it lands on whichever backend is free. In a block of its own, because a
 * part that fails then leaves the block open (aborted), the backend still this client's, and the
 * connection is closed instead (a pooler then closes that server connection with it).
 */
export function scrubMessage(seed: string = freshSeed()): string {
  if (!/^-?[0-9.]+(e-?[0-9]+)?$/.test(seed)) throw new Error('A seed is a number.');
  return [
    'ROLLBACK',
    'BEGIN',
    ...CLEANUP_STATEMENTS,
    `SELECT pg_catalog.setseed(${seed}::pg_catalog.float8)`,
    REMOTE_DISCONNECT_ALL,
    'COMMIT',
  ].join(';\n');
}

/** How a scrub ended: the session clean, or nothing sent since the backend the call ran on is out of reach. */
export type ScrubOutcome = 'clean' | 'unreachable';

/**
 * scrubMessage sent as pg's Client runs a custom query: once the client is ready for it, so that
 * the transaction status the server last reported is the one after the call. When `reachable`
 * says no for that status (behind a pooler, a session outside any transaction: its backend may
 * already serve another client) nothing is sent. Rejects when a part of the clean-up failed.
 */
export class ScrubQuery {
  readonly done: Promise<ScrubOutcome>;
  readonly #reachable: () => boolean;
  #failure: unknown;
  #resolve!: (outcome: ScrubOutcome) => void;
  #reject!: (err: unknown) => void;

  constructor(reachable: () => boolean) {
    this.#reachable = reachable;
    this.done = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  /** Called by pg's Client when the connection is free; an error returned is handed back to handleError. */
  submit(wire: { query(text: string): void }): Error | undefined {
    if (!this.#reachable()) {
      this.#resolve('unreachable');
      return new Error('The backend of the call is out of reach.');
    }
    wire.query(scrubMessage());
    return undefined;
  }

  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleCommandComplete(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}
  handleCopyData(): void {}

  handleError(err: unknown): void {
    this.#failure ??= err;
    // A part failed (the server skips the rest and leaves the block aborted), nothing was sent
    // (submit said so) or the connection failed: the caller closes the connection, at once.
    this.#reject(err);
  }

  handleReadyForQuery(): void {
    if (this.#failure === undefined) this.#resolve('clean');
  }
}

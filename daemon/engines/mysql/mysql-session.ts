/** Which server answers: the session variables differ between MariaDB and MySQL. */
export interface ServerInfo {
  /** `VERSION()` as the server reports it. */
  readonly version: string;
  readonly flavour: 'mariadb' | 'mysql';
  /** Numeric version, e.g. [10, 11, 6]. */
  readonly release: readonly [number, number, number];
}

/** Reads `VERSION()`: MariaDB says so in the string (`10.11.6-MariaDB-...`); anything else is MySQL. */
export function serverInfo(version: string): ServerInfo {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  const release: [number, number, number] = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [0, 0, 0];
  return { version, flavour: /mariadb/i.test(version) ? 'mariadb' : 'mysql', release };
}

function atLeast(server: ServerInfo, major: number, minor: number, patch: number): boolean {
  const [a, b, c] = server.release;
  return a !== major ? a > major : b !== minor ? b > minor : c >= patch;
}

/** Slack between our client-side cancel and the server's own statement limit. */
export const SERVER_LIMIT_SLACK_MS = 1000;

/** The session state a call needs. */
export interface SessionWants {
  readonly readOnly: boolean;
  /** Client-side timeout; 0 or non-finite means none. */
  readonly timeoutMs: number;
  /** The call carries context values: the connection separates rows by a DEFINER view. */
  readonly separated?: boolean;
}

/**
 * One `SET` that puts the session in the state a call needs, in a single round trip:
 *
 * - `time_zone = '+00:00'`, so TIMESTAMP values arrive in UTC (mysql2 reads them with `timezone: 'Z'`).
 * - session read-only (`tx_read_only` on MariaDB, `transaction_read_only` on MySQL 5.7.20+) for
 *   read calls. `START TRANSACTION READ ONLY` alone does not stop DDL: DDL commits implicitly and
 *   then runs outside that transaction. A read-only session refuses it as well.
 * - the server-side statement limit, a belt under our own cancel (which fires first): MariaDB's
 *   `max_statement_time` (seconds, every statement) or MySQL's `max_execution_time` (ms, SELECT
 *   only). It stops the statement even if the daemon dies or the KILL connection cannot be opened.
 * - where the call separates rows, no pushing of the caller's conditions into a materialised view
 *   (MariaDB `condition_pushdown_for_derived`, MySQL 8.0.22+ `derived_condition_pushdown`): pushed
 *   down, a condition becomes an index condition checked before the view's own filter, so a
 *   condition that errors on a hidden row tells its value (docs/context-parameters.md). Back to
 *   the server's default otherwise.
 */
export function sessionSql(server: ServerInfo, wants: SessionWants): string {
  const limitMs = Number.isFinite(wants.timeoutMs) && wants.timeoutMs > 0 ? Math.ceil(wants.timeoutMs) + SERVER_LIMIT_SLACK_MS : 0;
  const parts = [`SESSION time_zone = '+00:00'`];
  const pushdown = wants.separated ? 'off' : 'default';
  if (server.flavour === 'mariadb') {
    parts.push(`SESSION tx_read_only = ${wants.readOnly ? 1 : 0}`);
    if (atLeast(server, 10, 1, 1)) parts.push(`SESSION max_statement_time = ${(limitMs / 1000).toFixed(3)}`);
    if (atLeast(server, 10, 2, 2)) parts.push(`SESSION optimizer_switch = 'condition_pushdown_for_derived=${pushdown}'`);
  } else {
    parts.push(`SESSION ${atLeast(server, 5, 7, 20) ? 'transaction_read_only' : 'tx_read_only'} = ${wants.readOnly ? 1 : 0}`);
    if (atLeast(server, 5, 7, 8)) parts.push(`SESSION max_execution_time = ${Math.min(limitMs, 4_294_967_295)}`);
    if (atLeast(server, 8, 0, 22)) parts.push(`SESSION optimizer_switch = 'derived_condition_pushdown=${pushdown}'`);
  }
  return `SET ${parts.join(', ')}`;
}

import { cliCommand } from '../../../shared/cli-command.js';
import { type ErrorCode, HanactlError } from '../../../shared/errors.js';
import { normaliseConnectError, normaliseDriverError } from '../scrub.js';
import { statementTimedOut } from '../stop-errors.js';
import type { MysqlError } from './mysql-module.js';

/**
 * What an error message may name. It holds no password: a failed connect is scrubbed of the
 * connection's secrets by value (`connectError` takes them), while an error under a call quotes
 * the agent's text and is masked by shape only (scrub.ts).
 */
export interface ErrorContext {
  /** `host:port`, or the socket path. */
  readonly where: string;
  readonly user?: string;
  readonly database?: string;
  readonly connectTimeoutMs: number;
}

/** Server error numbers that mean the session is gone. */
const LOST_ERRNOS = new Set([
  1053, // ER_SERVER_SHUTDOWN
  1927, // ER_CONNECTION_KILLED (MariaDB: KILL <id> from another session)
  4031, // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8.0.24+: wait_timeout passed)
]);
const LOST_CODES = new Set(['PROTOCOL_CONNECTION_LOST', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ERR_STREAM_DESTROYED']);

export const ER_QUERY_INTERRUPTED = 1317;
const TIMEOUT_ERRNOS = new Set([
  1969, // ER_STATEMENT_TIMEOUT (MariaDB max_statement_time)
  3024, // ER_QUERY_TIMEOUT (MySQL max_execution_time)
]);
const READ_ONLY_ERRNOS = new Set([1792, 1207]); // in a READ ONLY transaction / read lock held

function facts(err: unknown): { sqlState?: string; nativeCode?: number | string } {
  const e = err as MysqlError | undefined;
  const out: { sqlState?: string; nativeCode?: number | string } = {};
  if (typeof e?.sqlState === 'string' && e.sqlState) out.sqlState = e.sqlState;
  if (typeof e?.errno === 'number') out.nativeCode = e.errno;
  else if (typeof e?.code === 'string') out.nativeCode = e.code;
  return out;
}

/** True when the error leaves the connection unusable (socket gone, session killed, protocol broken). */
export function isConnectionLost(err: unknown): boolean {
  const e = err as MysqlError | undefined;
  if (!e || typeof e !== 'object') return false;
  return (
    e.fatal === true || (typeof e.errno === 'number' && LOST_ERRNOS.has(e.errno)) || (typeof e.code === 'string' && LOST_CODES.has(e.code))
  );
}

/** A sentence as an error; `secrets` (a failed connect's only) are scrubbed from it by value. */
function buildError(
  code: ErrorCode,
  sentence: string,
  err: unknown,
  hint?: string,
  secrets?: readonly (string | undefined)[],
): HanactlError {
  const normalised = secrets
    ? normaliseConnectError(new Error(sentence), code, secrets, facts(err))
    : normaliseDriverError(new Error(sentence), code, facts(err));
  return hint ? new HanactlError(code, normalised.message, { ...normalised.details, hint }) : normalised;
}

function driverText(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  // trimEnd, not /\s+$/: the text quotes the statement, and that regex is quadratic on it.
  const trimmed = text.trimEnd();
  return trimmed.endsWith('.') ? trimmed.slice(0, -1) : trimmed;
}

/**
 * A failure to open a connection, as a sentence that names host:port and what to check, with
 * `secrets` scrubbed by value: no agent text has reached the server yet.
 */
export function connectError(err: unknown, ctx: ErrorContext, secrets: readonly (string | undefined)[]): HanactlError {
  if (err instanceof HanactlError) return err;
  const e = err as MysqlError;
  const build = (code: ErrorCode, sentence: string, cause: unknown) => buildError(code, sentence, cause, undefined, secrets);
  const at = `Could not connect to MySQL/MariaDB at ${ctx.where}`;
  const as = ctx.user ? ` as "${ctx.user}"` : '';
  switch (e?.code) {
    case 'ECONNREFUSED':
      return build(
        'CONNECT_FAILED',
        `${at}: the connection was refused. Check that the server is running and listens on that host and port.`,
        err,
      );
    case 'ETIMEDOUT':
      return build(
        'CONNECT_FAILED',
        `${at}: no answer within ${ctx.connectTimeoutMs} ms. Check the host and port, and any firewall or VPN in between.`,
        err,
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return build('CONNECT_FAILED', `${at}: the host name could not be resolved. Check the host name in the connection URL.`, err);
    case 'ENOENT':
      return build(
        'CONNECT_FAILED',
        `${at}: the socket file does not exist. Check the "socket" option and that the server is running.`,
        err,
      );
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return build('CONNECT_FAILED', `${at}: the host is unreachable. Check the network, VPN or firewall.`, err);
    case 'HANDSHAKE_NO_SSL_SUPPORT':
      return build(
        'CONNECT_FAILED',
        `${at}: the server does not offer TLS, but the URL asks for it. Turn TLS on at the server or use sslmode=disable.`,
        err,
      );
    default:
      break;
  }
  if (e?.errno === 1045 || e?.errno === 1698) {
    return build(
      'CONNECT_FAILED',
      `${at}: the server refused user${as || ' (none given)'} (access denied). Check the user name and the password stored with hanactl (${cliCommand()} add ... --password-stdin).`,
      err,
    );
  }
  if (e?.errno === 1049) {
    return build(
      'CONNECT_FAILED',
      `${at}${as}: database "${ctx.database ?? ''}" does not exist. Check the database name in the connection URL.`,
      err,
    );
  }
  if (/certificate|self.signed|ssl|tls/i.test(driverText(err))) {
    return build('CONNECT_FAILED', `${at}: TLS failed (${driverText(err)}). Check sslmode and the sslca/sslcert/sslkey files.`, err);
  }
  return build('CONNECT_FAILED', `${at}${as}: ${driverText(err)}.`, err);
}

/** The connection died under a call (server restart, KILL, network). */
export function lostError(err: unknown, ctx: ErrorContext): HanactlError {
  const cause = err === undefined ? '' : ` (${driverText(err)})`;
  return buildError(
    'CONNECT_FAILED',
    `The connection to MySQL/MariaDB at ${ctx.where} was lost${cause}; the pool opens a new one for the next call.`,
    err,
  );
}

/** A failed statement, with SQLSTATE and the server's error number kept; `timeoutMs` is the call's limit. */
export function statementError(err: unknown, ctx: ErrorContext, timeoutMs?: number): HanactlError {
  if (err instanceof HanactlError) return err;
  if (isConnectionLost(err)) return lostError(err, ctx);
  const errno = (err as MysqlError | undefined)?.errno;
  if (errno !== undefined && TIMEOUT_ERRNOS.has(errno)) {
    return statementTimedOut(timeoutMs, facts(err));
  }
  if (errno === ER_QUERY_INTERRUPTED) {
    return buildError(
      'QUERY_CANCELLED',
      `The statement was interrupted on the server (KILL QUERY from another session): ${driverText(err)}.`,
      err,
    );
  }
  if (errno !== undefined && READ_ONLY_ERRNOS.has(errno)) {
    return buildError(
      'QUERY_FAILED',
      driverText(err),
      err,
      'Read calls run in a read-only transaction; writes need a connection a person marked writable with hanactl.',
    );
  }
  return normaliseDriverError(err, 'QUERY_FAILED', facts(err));
}

import type { HanactlError } from '../../../shared/errors.js';
import { normaliseConnectError, normaliseDriverError } from '../scrub.js';

/** HANA's numeric code and SQLSTATE, as the client reports them on its errors. */
export interface HanaErrorFacts {
  readonly nativeCode?: number | string;
  readonly sqlState?: string;
}

export function errorFacts(err: unknown): HanaErrorFacts {
  if (typeof err !== 'object' || err === null) return {};
  const { code, sqlState } = err as { code?: unknown; sqlState?: unknown };
  const facts: { nativeCode?: number | string; sqlState?: string } = {};
  if (typeof code === 'number' || (typeof code === 'string' && code !== '')) facts.nativeCode = code;
  if (typeof sqlState === 'string' && sqlState !== '') facts.sqlState = sqlState;
  return facts;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Client codes meaning the connection itself is gone (not just the statement). */
const CONNECTION_LOST_CODES = new Set([-10709, -10807, -10108, -20006]);

/** True when the error says the session is unusable, so the pool must destroy it. */
export function isConnectionLost(err: unknown): boolean {
  // hanactl's own bound expired (callbacks.ts NoAnswerError): the session cannot be trusted.
  if (err instanceof Error && err.name === 'NoAnswerError') return true;
  const code = Number(errorFacts(err).nativeCode);
  return CONNECTION_LOST_CODES.has(code) || /connection (failed|lost|closed)|no connection available|socket closed/i.test(messageOf(err));
}

/** HANA's "authentication failed" (10) and the messages of locked or invalid users. */
function isAuthFailure(err: unknown, message: string): boolean {
  return Number(errorFacts(err).nativeCode) === 10 || /authentication failed|invalid (user|password)|user is locked/i.test(message);
}

function connectAdvice(err: unknown, message: string, timeoutMs: number): string {
  if (isAuthFailure(err, message)) return 'The server refused the credentials: check the user name and the stored password.';
  if (/refused/i.test(message)) {
    return 'Nothing accepted the connection: check the host and port (SQL port 3<instance>15 or 3<instance>13 with a tenant name, 443 on SAP HANA Cloud) and that the database is running.';
  }
  if (/time ?out|timed out/i.test(message)) {
    return `No answer within ${timeoutMs} ms: check the host and port, and any firewall, VPN or proxy in between.`;
  }
  if (/ssl|tls|certificate|handshake|crypt/i.test(message)) {
    return 'The TLS handshake failed: check the encrypt, sslValidateCertificate, sslTrustStore and sslHostNameInCertificate options.';
  }
  if (/database|tenant/i.test(message)) return "Check the tenant database name in the URL's path.";
  return 'Check the host, port, tenant database and credentials, and that the server is reachable from this machine.';
}

/**
 * A failed connect as CONNECT_FAILED: one sentence naming `host:port` and what to check, with
 * HANA's code and SQLSTATE kept and every secret scrubbed by value (no agent text has reached the server).
 */
export function connectError(
  err: unknown,
  where: { serverNode: string; databaseName?: string; timeoutMs: number },
  secrets: readonly (string | undefined)[],
): HanactlError {
  const raw = messageOf(err) || 'no reason given';
  const tenant = where.databaseName ? ` (tenant ${where.databaseName})` : '';
  const sentence = `Could not connect to SAP HANA at ${where.serverNode}${tenant}: ${asSentence(raw)} ${connectAdvice(err, raw, where.timeoutMs)}`;
  return normaliseConnectError(new Error(sentence), 'CONNECT_FAILED', secrets, errorFacts(err));
}

/** `raw` ending in exactly one full stop, trailing whitespace removed (linear: HANA quotes the statement). */
function asSentence(raw: string): string {
  const trimmed = raw.trimEnd();
  return `${trimmed.endsWith('.') ? trimmed.slice(0, -1) : trimmed}.`;
}

/**
 * A failed statement as QUERY_FAILED, HANA's message masked by shape only (scrub.ts), code and
 * SQLSTATE kept: it quotes the agent's statement, so no password's value decides what it shows.
 */
export function queryError(err: unknown): HanactlError {
  return normaliseDriverError(err, 'QUERY_FAILED', errorFacts(err));
}

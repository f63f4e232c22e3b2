import { createRequire } from 'node:module';
import { type Target, URL_OPTIONS } from '../../../shared/connection-url.js';
import { HanactlError } from '../../../shared/errors.js';
import type { Driver, DriverConnection, DriverFactory, DriverSecret, DriverSettings } from '../driver.js';
import { normaliseConnectError } from '../scrub.js';
import type { PgRowParser } from './postgres-batch.js';
import { type PgWireKit, PostgresConnection } from './postgres-connection.js';
import { boundServerMessages, type PgWireConnection } from './postgres-message-bound.js';
import type { PgClient, PgClientConfig, PgModule } from './postgres-types.js';

const require = createRequire(import.meta.url);

const KNOWN_OPTIONS = new Set<string>(URL_OPTIONS.postgres);

/** Parsers that keep values exact: int8 as a number only when safe, dates and timestamps as the server wrote them. */
function typeParsers(pg: PgModule) {
  const asText = (v: string) => v;
  const int8 = (v: string) => {
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : v;
  };
  const overrides: Record<number, (v: string) => unknown> = { 20: int8, 1082: asText, 1114: asText, 1083: asText, 1266: asText };
  const base = (pg as unknown as { types: { getTypeParser(oid: number, format?: string): (v: string) => unknown } }).types;
  return {
    getTypeParser(oid: number, format?: string) {
      const own = overrides[oid];
      return format !== 'binary' && own ? own : base.getTypeParser(oid, format);
    },
  };
}

/**
 * A value for the startup packet's `options`, written as the server splits it (pg_split_opts in
 * postinit.c): white space ends an argument unless a backslash comes before it, and a backslash
 * stands for the character after it. So a value keeps its spaces, quotes, backslashes and
 * characters past ASCII, and can never become a second `-c` option. A control character cannot
 * be part of a schema name a person means, and the server's own reading of one is refused here.
 */
function startupOptionValue(value: string): string {
  if ([...value].some((c) => c.charCodeAt(0) < 0x20 || c === '\x7f')) {
    throw new HanactlError('INVALID_URL', 'The PostgreSQL URL option "search_path" holds a control character; list schema names only.');
  }
  return value.replace(/[\\\s]/g, (c) => `\\${c}`);
}

/** Builds the `pg` client configuration for a target; the password is passed separately. */
export function pgConfig(target: Target, settings: DriverSettings): PgClientConfig {
  for (const key of Object.keys(target.options)) {
    if (!KNOWN_OPTIONS.has(key)) {
      throw new HanactlError(
        'INVALID_URL',
        `The PostgreSQL URL option "${key}" is not supported; known options: ${[...KNOWN_OPTIONS].join(', ')}.`,
      );
    }
  }
  const sslmode = target.options.sslmode;
  const ssl =
    sslmode === undefined || sslmode === 'disable' || sslmode === 'prefer'
      ? undefined
      : { rejectUnauthorized: sslmode === 'verify-full' || sslmode === 'verify-ca' };
  const searchPath = target.options.search_path ?? target.options.schema;
  return {
    ...(target.host !== undefined ? { host: target.host } : {}),
    ...(target.port !== undefined ? { port: target.port } : {}),
    ...(target.user !== undefined ? { user: target.user } : {}),
    ...(target.database !== undefined ? { database: target.database } : {}),
    connectionTimeoutMillis: settings.connectTimeoutMs,
    application_name: target.options.application_name ?? 'hanactl',
    ...(ssl ? { ssl } : {}),
    ...(searchPath ? { options: `-c search_path=${startupOptionValue(searchPath)}` } : {}),
  };
}

/**
 * pg's own value encoding and row parser: a batch encodes and parses exactly as a pg query on
 * the same client does.
 */
function wireKit(client: PgClient): PgWireKit {
  const Result = require('pg/lib/result.js') as new (rowMode: 'array', types: unknown) => PgRowParser;
  const { prepareValue } = require('pg/lib/utils.js') as { prepareValue(value: unknown): string | Buffer | null };
  // The client's type parsers (typeParsers above), as pg's own queries on it use them.
  const types = (client as unknown as { _types?: unknown })._types;
  return { prepareValue, rowParser: () => new Result('array', types) };
}

/** What a new session learns in its first round trip. */
interface SessionFacts {
  /** The session reaches PostgreSQL through a pooler (PgBouncer and the like): the pid announced at connect time is not the backend's own. */
  readonly pooled: boolean;
  /** The server checks, while a statement runs, that its client is still there (`client_connection_check_interval`, PostgreSQL 14 and later). */
  readonly checksClient: boolean;
}

/** The first round trip of a new session: the backend's own pid and the server's version. */
export const SESSION_FACTS =
  "SELECT pg_catalog.pg_backend_pid() AS pid, pg_catalog.int4in(pg_catalog.textout(pg_catalog.current_setting('server_version_num'))) AS version";

/** One round trip per new connection: the backend's own pid and the server's version. */
async function sessionFacts(client: PgClient, secrets: readonly string[]): Promise<SessionFacts> {
  try {
    const { rows } = await client.query(SESSION_FACTS);
    return { pooled: Number(rows[0]?.pid) !== client.processID, checksClient: Number(rows[0]?.version) >= 140000 };
  } catch (err) {
    await client.end().catch(() => {});
    throw normaliseConnectError(err, 'CONNECT_FAILED', secrets);
  }
}

/** The PostgreSQL driver (`pg`), one client per pooled connection. */
export const createPostgresDriver: DriverFactory = (target: Target, secret: DriverSecret, settings: DriverSettings): Driver => {
  const config = pgConfig(target, settings);
  const password = secret.password;
  const secrets = password ? [password] : [];
  const where = `${target.host}:${target.port}`;

  const open = async (): Promise<PgClient> => {
    const pg = require('pg') as PgModule;
    const client = new pg.Client({ ...config, types: typeParsers(pg) } as PgClientConfig);
    // Set after construction and non-enumerable: never in a log line, an inspect or a stack.
    Object.defineProperty(client, 'password', { value: password, enumerable: false, writable: true });
    // No server message is read whole past MAX_SERVER_MESSAGE_BYTES (a row too wide fails its call, not the daemon).
    boundServerMessages((client as unknown as { connection: PgWireConnection }).connection);
    try {
      await client.connect();
    } catch (err) {
      await client.end().catch(() => {});
      const code = (err as { code?: string }).code;
      // Any socket-level errno (ECONNREFUSED, ENOTFOUND, EAI_AGAIN, EHOSTUNREACH, ENETUNREACH, ETIMEDOUT ...)
      // means the server was never reached; only a server's own answer (a SQLSTATE) is a refusal.
      const network = typeof code === 'string' && /^E[A-Z_]+$/.test(code);
      const prefix =
        network || /timeout/i.test(String((err as Error).message))
          ? `Cannot reach PostgreSQL at ${where}${network ? ` (${code})` : ''}; check that the server runs, the host and port are right, and the network (VPN, firewall) lets you through.`
          : `PostgreSQL at ${where} refused the connection.`;
      const inner = normaliseConnectError(err, 'CONNECT_FAILED', secrets, code && /^[0-9A-Z]{5}$/.test(code) ? { sqlState: code } : {});
      throw new HanactlError('CONNECT_FAILED', `${prefix} ${inner.message}`, inner.details);
    }
    return client;
  };

  return {
    engine: 'postgres',
    async connect(): Promise<DriverConnection> {
      const client = await open();
      const facts = await sessionFacts(client, secrets);
      return new PostgresConnection(client, wireKit(client), open, facts.pooled, facts.checksClient);
    },
  };
};

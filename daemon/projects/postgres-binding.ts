import { parseConnectionUrl, type Target } from '../../shared/connection-url.js';
import type { BoundTarget } from './hana-binding.js';
import { asText, SourceError } from './source-error.js';

const URL_SCHEMES = /^(sqlite|postgres|postgresql|mysql|mariadb|hana):/i;

/**
 * Parses a connection URL found in a project file (`DATABASE_URL`, a binding's `uri`). A
 * relative SQLite path is relative to the project root. A URL hanactl cannot read is reported
 * by `where` alone: the URL may hold a password, so its text never appears in the message.
 */
export function targetFromUrl(url: string, where: string, root: string): BoundTarget {
  if (!URL_SCHEMES.test(url.trim())) {
    throw new SourceError(`${where} is not a URL hanactl reads (sqlite:, postgres://, mysql://, mariadb:// or hana://).`);
  }
  try {
    const parsed = parseConnectionUrl(url, root);
    return parsed.password !== undefined ? { target: parsed.target, password: parsed.password } : { target: parsed.target };
  } catch {
    throw new SourceError(`${where} is not a valid connection URL (check its host, port and %-escapes).`);
  }
}

/**
 * Maps PostgreSQL credentials (a VCAP `postgresql` binding: `hostname`, `port`, `username`,
 * `password`, `dbname`, else its `uri`; CAP's `host`, `user`, `database`) to a target.
 */
export function postgresTarget(credentials: Record<string, unknown>, where: string, root: string): BoundTarget {
  const uri = asText(credentials.uri) ?? asText(credentials.url);
  const fromUri = uri && /^postgres(ql)?:\/\//i.test(uri) ? targetFromUrl(uri, `${where} credentials.uri`, root) : undefined;
  const host = asText(credentials.hostname) ?? asText(credentials.host) ?? fromUri?.target.host;
  if (!host) throw new SourceError(`${where} has no credentials.hostname (or host, or uri).`);
  const portText = asText(credentials.port);
  const port = portText === undefined ? (fromUri?.target.port ?? 5432) : Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new SourceError(`${where} has a credentials.port that is not a number from 1 to 65535.`);
  const user = asText(credentials.username) ?? asText(credentials.user) ?? fromUri?.target.user;
  const database = asText(credentials.dbname) ?? asText(credentials.database) ?? fromUri?.target.database;
  const password = typeof credentials.password === 'string' ? credentials.password : fromUri?.password;

  const options: Record<string, string> = {};
  const sslmode = asText(credentials.sslmode);
  if (sslmode) options.sslmode = sslmode;
  else if (asText(credentials.sslrootcert) || asText(credentials.sslcert) || credentials.ssl === true) options.sslmode = 'require';
  const schema = asText(credentials.schema);
  if (schema) options.schema = schema;

  const target: Target = {
    engine: 'postgres',
    scheme: 'postgres',
    host,
    port,
    ...(user ? { user } : {}),
    ...(database ? { database } : {}),
    options,
  };
  return password !== undefined ? { target, password } : { target };
}

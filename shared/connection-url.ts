import { isAbsolute, resolve } from 'node:path';
import { ENGINES, type Engine, engineSpec } from './engines.js';
import { HanactlError } from './errors.js';
import { isWhitespace } from './linear-text.js';

export { ENGINES, type Engine } from './engines.js';

/** Where a connection points, without its secret. Pools are keyed by this. */
export interface Target {
  readonly engine: Engine;
  /** The scheme as the person wrote it (`mariadb`, `postgresql`, ...), kept for display. */
  readonly scheme: string;
  readonly host?: string;
  readonly port?: number;
  readonly user?: string;
  readonly database?: string;
  /** A file engine's (SQLite's) absolute file path, or `:memory:`. */
  readonly path?: string;
  readonly options: Readonly<Record<string, string>>;
}

export interface ParsedUrl {
  readonly target: Target;
  /** A password found inside the URL (accepted, but the CLI warns about it). */
  readonly password?: string;
}

/** Every scheme a URL may start with, listed or alias, and its engine. */
const SCHEMES: ReadonlyMap<string, Engine> = new Map(
  ENGINES.flatMap((engine) => [...engineSpec(engine).schemes, ...(engineSpec(engine).aliases ?? [])].map((scheme) => [scheme, engine])),
);

/**
 * The query options each engine's URL accepts, by name (its `urlOptions` in shared/engines.ts);
 * any other is refused when the URL is parsed (at `hanactl add`, in the daemon, in project
 * files), with the list. The drivers check the values when they connect and take these lists
 * from here.
 */
export const URL_OPTIONS: Readonly<Record<Engine, readonly string[]>> = Object.fromEntries(
  ENGINES.map((engine) => [engine, engineSpec(engine).urlOptions]),
) as Record<Engine, readonly string[]>;

/** Refuses a query option the engine does not know, naming the ones it does. */
function checkOptionNames(engine: Engine, options: Readonly<Record<string, string>>): void {
  const spec = engineSpec(engine);
  const fold = spec.optionNamesIgnoreCase ? (k: string) => k.toLowerCase() : (k: string) => k;
  const known = new Set(spec.urlOptions.map(fold));
  for (const key of Object.keys(options)) {
    if (known.has(fold(key))) continue;
    throw new HanactlError(
      'INVALID_URL',
      `The ${spec.label} URL option "${key.slice(0, 64)}" is not supported; the options are: ${spec.urlOptions.join(', ')}.`,
    );
  }
}

const EXAMPLES = `Examples: ${ENGINES.map((engine) => engineSpec(engine).example).join(', ')}`;

/** `sqlite:, postgres://, mysql://, mariadb:// or hana://`: the listed schemes as written. */
const SCHEME_LIST = ((written: string[]) => `${written.slice(0, -1).join(', ')} or ${written.at(-1)}`)(
  ENGINES.flatMap((engine) =>
    engineSpec(engine).schemes.map((scheme) => `${scheme}:${engineSpec(engine).address === 'server' ? '//' : ''}`),
  ),
);

function invalid(message: string): HanactlError {
  return new HanactlError('INVALID_URL', `${message} ${EXAMPLES}`);
}

/**
 * Parses a connection URL. Relative SQLite paths are resolved against `baseDir` (the
 * caller's working folder), so a daemon started elsewhere opens the same file.
 */
export function parseConnectionUrl(url: string, baseDir: string = process.cwd()): ParsedUrl {
  if (typeof url !== 'string' || url.trim() === '') throw invalid('The connection URL is empty.');
  const text = url.trim();
  const colon = text.indexOf(':');
  const scheme = colon > 0 ? text.slice(0, colon).toLowerCase() : '';
  const engine = SCHEMES.get(scheme);
  if (!engine) {
    throw invalid(`Unknown URL scheme ${scheme ? `"${scheme}:"` : '(none)'}; use ${SCHEME_LIST}.`);
  }
  const parsed =
    engineSpec(engine).address === 'file'
      ? { target: parseFile(text.slice(colon + 1), engine, scheme, baseDir) }
      : parseNetwork(text, engine, scheme);
  checkOptionNames(engine, parsed.target.options);
  return parsed;
}

/** `<scheme>:<path>[?options]` of a file engine; `<scheme>://<path>` is read the same. */
function parseFile(rest: string, engine: Engine, scheme: string, baseDir: string): Target {
  const { label, example } = engineSpec(engine);
  let raw = rest;
  const q = raw.indexOf('?');
  const options: Record<string, string> = {};
  if (q >= 0) {
    for (const [k, v] of new URLSearchParams(raw.slice(q + 1))) options[k] = v;
    raw = raw.slice(0, q);
  }
  if (raw.startsWith('//')) raw = raw.slice(2); // sqlite:///abs/path or sqlite://./rel
  if (raw === '') throw invalid(`A ${scheme}: URL needs a file path, e.g. ${example}.`);
  let path: string;
  try {
    path = raw === ':memory:' ? raw : decodeURIComponent(raw);
  } catch {
    throw invalid(`The ${label} path has a malformed %-escape.`);
  }
  if (path.includes('\0')) throw invalid(`The ${label} path contains a NUL character.`);
  if (path !== ':memory:' && !isAbsolute(path)) path = resolve(baseDir, path);
  return { engine, scheme, path, options };
}

function parseNetwork(text: string, engine: Engine, scheme: string): ParsedUrl {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw invalid(whyInvalid(text, scheme));
  }
  if (!text.slice(scheme.length).startsWith('://')) throw invalid(`A ${scheme} URL starts with ${scheme}://.`);
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!host) throw invalid(`The ${scheme} URL has no host.`);
  let port = engineSpec(engine).defaultPort?.(host);
  if (u.port) {
    port = Number(u.port);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw invalid(`Port ${u.port} is out of range.`);
  }
  const decode = (s: string, what: string): string => {
    try {
      return decodeURIComponent(s);
    } catch {
      throw invalid(`The ${what} in the URL has a malformed %-escape.`);
    }
  };
  const user = u.username ? decode(u.username, 'user') : undefined;
  const password = u.password ? decode(u.password, 'password') : undefined;
  const dbPath = u.pathname.replace(/^\//, '');
  if (dbPath.includes('/')) throw invalid(`The path "/${dbPath}" holds more than one segment; give only the database name.`);
  const database = dbPath ? decode(dbPath, 'database name') : undefined;
  const options: Record<string, string> = {};
  for (const [k, v] of u.searchParams) {
    if (/pass(word)?|pwd|secret/i.test(k))
      throw invalid(`Do not put a password in the URL's query ("${k}"); use --password-stdin or the prompt.`);
    options[k] = v;
  }
  const target: Target = {
    engine,
    scheme,
    host,
    port,
    ...(user !== undefined ? { user } : {}),
    ...(database !== undefined ? { database } : {}),
    options,
  };
  return password !== undefined ? { target, password } : { target };
}

/**
 * Names what made `new URL` refuse a server URL (no host, a bad port) where it can tell. An
 * `@` past the first `/` means an unencoded character in the user or password cut the
 * authority short; the port is never echoed, as it may then be part of the password.
 */
function whyInvalid(text: string, scheme: string): string {
  const generic = `"${redactUrl(text)}" is not a valid URL; percent-encode any of : / ? # @ in the user or password.`;
  const authority = /^[^:]+:\/\/([^/?#]*)/.exec(text)?.[1];
  if (authority === undefined || text.indexOf('@', text.indexOf('//') + 2 + authority.length) >= 0) return generic;
  const hostPort = /^(\[[^\]]*\]|[^:]*)(?::(.*))?$/.exec(authority.slice(authority.lastIndexOf('@') + 1));
  if (hostPort?.[1] === '') return `The ${scheme} URL has no host.`;
  const port = hostPort?.[2];
  if (port && (!/^\d+$/.test(port) || Number(port) > 65535)) return `The port in the ${scheme} URL is not a number from 1 to 65535.`;
  return generic;
}

/** The URL of a target as shown to people and agents: never a password. */
export function formatTarget(target: Target): string {
  const query = new URLSearchParams(Object.entries(target.options).sort(([a], [b]) => a.localeCompare(b))).toString();
  const suffix = query ? `?${query}` : '';
  // `%` and `?` in a file name are escaped, or reading the URL back would decode or split there.
  const spec = engineSpec(target.engine);
  if (spec.address === 'file') return `${spec.schemes[0]}:${target.path?.replace(/[%?]/g, encodeURIComponent)}${suffix}`;
  const user = target.user ? `${encodeURIComponent(target.user)}@` : '';
  const host = target.host?.includes(':') ? `[${target.host}]` : target.host;
  const db = target.database ? `/${encodeURIComponent(target.database)}` : '';
  return `${target.scheme}://${user}${host}:${target.port}${db}${suffix}`;
}

/**
 * Replaces the password of every URL-shaped part of `text` (`//user:password@`) with `***`, for
 * error messages. A scan, not a regex: error messages quote agent SQL, and the regex
 * `/(\/\/[^:/@\s]*:)[^@\s]*@/g` is quadratic on text such as `//:` repeated.
 */
export function redactUrl(text: string): string {
  let out = '';
  let copied = 0;
  let from = 0;
  for (let at = text.indexOf('//', from); at >= 0; at = text.indexOf('//', from)) {
    let colon = at + 2;
    while (colon < text.length && !':/@'.includes(text.charAt(colon)) && !isWhitespace(text.charAt(colon))) colon++;
    if (text.charAt(colon) !== ':') {
      from = at + 1;
      continue;
    }
    let end = colon + 1;
    while (end < text.length && text.charAt(end) !== '@' && !isWhitespace(text.charAt(end))) end++;
    if (end === text.length || text.charAt(end) !== '@') {
      // No `//` before `end` can reach an `@` either: its password would run to the same place.
      from = end;
      continue;
    }
    out += `${text.slice(copied, colon + 1)}***`;
    copied = end;
    from = end + 1;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

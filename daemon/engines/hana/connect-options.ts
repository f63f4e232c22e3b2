import type { Target } from '../../../shared/connection-url.js';
import { HanactlError } from '../../../shared/errors.js';
import { hanaEndpointDefaults } from '../../../shared/hana-endpoint.js';
import type { DriverSettings } from '../driver.js';

/**
 * What `@sap/hana-client`'s `connect()` receives, minus the password: safe to log, compare and
 * serialise. The password is added only inside the connect call (see `HanaDriver.connect`).
 */
export interface HanaConnectOptions {
  /** `host:port` (`[v6]:port` for IPv6). */
  readonly serverNode: string;
  readonly uid?: string;
  /** The tenant database, from the URL's path. */
  readonly databaseName?: string;
  /** Milliseconds; the client's default waits far longer and holds process exit meanwhile. */
  readonly connectTimeout: number;
  /**
   * Milliseconds any request may wait for the server's answer: only a backstop, past the longest
   * call hanactl runs. Each request is bounded by hanactl's own deadline instead: a statement and
   * its row fetches by the call's, everything else by the connect timeout.
   */
  readonly communicationTimeout: number;
  readonly [option: string]: string | number | boolean | undefined;
}

type Kind = 'boolean' | 'string' | 'port' | readonly string[];

/**
 * URL query options passed through to the client, by their client name. Anything else is
 * refused: an unknown option is a typo or a setting hanactl owns, never silently ignored.
 */
export const HANA_URL_OPTIONS: Readonly<Record<string, Kind>> = {
  encrypt: 'boolean',
  sslValidateCertificate: 'boolean',
  sslCryptoProvider: ['openssl', 'commoncrypto', 'mscrypto'],
  sslTrustStore: 'string',
  sslHostNameInCertificate: 'string',
  sslSNIHostname: 'string',
  sslUseDefaultTrustStore: 'boolean',
  sslMinProtocolVersion: 'string',
  sslMaxProtocolVersion: 'string',
  currentSchema: 'string',
  databaseName: 'string',
  locale: 'string',
  compress: 'boolean',
  reconnect: 'boolean',
  distribution: ['OFF', 'CONNECTION', 'STATEMENT', 'ALL'],
  proxyHost: 'string',
  proxyPort: 'port',
  proxyUserName: 'string',
  proxyHttp: 'boolean',
  proxyScpAccount: 'string',
};

/** Names CAP and hana-cli credentials use for the same settings. */
const ALIASES: Readonly<Record<string, string>> = {
  schema: 'currentSchema',
  validate_certificate: 'sslValidateCertificate',
  hostname_in_certificate: 'sslHostNameInCertificate',
};

/** Options a person might try that hanactl sets itself, with where they belong instead. */
const OWNED: Readonly<Record<string, string>> = {
  connecttimeout: 'hanactl sets it from its connect timeout setting',
  communicationtimeout: "hanactl sets it from its connect timeout and each call's timeout",
  nodeconnecttimeout: 'hanactl sets the connect timeout itself',
  uid: 'put the user before the "@" in the URL',
  user: 'put the user before the "@" in the URL',
  servernode: 'put host:port in the URL',
  host: 'put host:port in the URL',
  port: 'put host:port in the URL',
};

const BY_LOWER = new Map<string, string>([
  ...Object.keys(HANA_URL_OPTIONS).map((k): [string, string] => [k.toLowerCase(), k]),
  ...Object.entries(ALIASES).map(([alias, k]): [string, string] => [alias.toLowerCase(), k]),
]);

const TRUE = new Set(['', 'true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

/** The longest call (`timeoutMs` at most 600 s, shared/schemas.ts) plus a minute for its cancel. */
export const COMMUNICATION_BACKSTOP_MS = 660_000;

function invalid(message: string): HanactlError {
  return new HanactlError('INVALID_URL', message);
}

/** Parses a URL boolean (`true/false`, `1/0`, `yes/no`, `on/off`; a bare `?encrypt` is true). */
export function parseBooleanOption(name: string, raw: string): boolean {
  const v = raw.trim().toLowerCase();
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  throw invalid(`The HANA option ${name}=${JSON.stringify(raw)} is not a boolean; use true or false.`);
}

function convert(name: string, kind: Kind, raw: string): string | number | boolean {
  if (kind === 'boolean') return parseBooleanOption(name, raw);
  if (kind === 'port') {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1 || n > 65535)
      throw invalid(`The HANA option ${name}=${JSON.stringify(raw)} is not a port (1-65535).`);
    return n;
  }
  if (Array.isArray(kind)) {
    const match = kind.find((k) => k.toLowerCase() === raw.trim().toLowerCase());
    if (!match) throw invalid(`The HANA option ${name}=${JSON.stringify(raw)} must be one of ${kind.join(', ')}.`);
    return match;
  }
  if (raw.trim() === '') throw invalid(`The HANA option ${name} is empty; give it a value or leave it out.`);
  return raw;
}

function timeoutMs(settings: DriverSettings): number {
  const ms = settings.connectTimeoutMs;
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new HanactlError('INTERNAL', `The HANA connect timeout must be a positive number of milliseconds, not ${ms}.`);
  }
  return Math.max(1, Math.round(ms));
}

/**
 * Maps a `hana://` target and the driver settings to the client's connect options. Query
 * options go through the `HANA_URL_OPTIONS` whitelist (names matched case-insensitively,
 * booleans normalised); an unknown one is refused with INVALID_URL naming it.
 */
export function buildHanaConnectOptions(target: Target, settings: DriverSettings): HanaConnectOptions {
  if (target.engine !== 'hana') throw new HanactlError('INTERNAL', `The HANA driver was given a ${target.engine} target.`);
  if (!target.host) throw invalid('The hana:// URL has no host.');
  const endpoint = hanaEndpointDefaults(target.host, target.port);
  const port = endpoint.port;
  const host = target.host.includes(':') ? `[${target.host}]` : target.host;
  const ms = timeoutMs(settings);

  const mapped: Record<string, string | number | boolean> = {};
  for (const [key, raw] of Object.entries(target.options)) {
    const lower = key.toLowerCase();
    const owned = OWNED[lower];
    if (owned) throw invalid(`The HANA option "${key}" cannot be set in the URL: ${owned}.`);
    const name = BY_LOWER.get(lower);
    const kind = name ? HANA_URL_OPTIONS[name] : undefined;
    if (!name || !kind) {
      throw invalid(`Unknown HANA connection option "${key}". Supported: ${Object.keys(HANA_URL_OPTIONS).join(', ')}.`);
    }
    const value = convert(key, kind, raw);
    if (name in mapped && mapped[name] !== value) {
      throw invalid(`The HANA option ${name} is given twice with different values.`);
    }
    mapped[name] = value;
  }

  if (target.database !== undefined && mapped.databaseName !== undefined && mapped.databaseName !== target.database) {
    throw invalid(
      `The tenant database is "${target.database}" in the URL's path but "${String(mapped.databaseName)}" in its databaseName option; give it once.`,
    );
  }
  const databaseName = target.database ?? (mapped.databaseName as string | undefined);
  delete mapped.databaseName;
  if (endpoint.encrypt && mapped.encrypt === undefined) mapped.encrypt = true;

  return {
    serverNode: `${host}:${port}`,
    ...(target.user !== undefined ? { uid: target.user } : {}),
    ...(databaseName !== undefined ? { databaseName } : {}),
    ...mapped,
    connectTimeout: ms,
    communicationTimeout: COMMUNICATION_BACKSTOP_MS,
  };
}

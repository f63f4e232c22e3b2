import { hanaEndpointDefaults } from './hana-endpoint.js';

/**
 * How a curated tool's SQL text is read for its `:name` placeholders (shared/curated.ts): the
 * engine's quotes and comments, so a `:name` inside them is not taken for one, and its bind syntax.
 */
export interface PlaceholderSyntax {
  /** A backslash escapes the next character inside `'...'` and `"..."` (MySQL). */
  readonly backslashEscapes: boolean;
  /** `` `...` `` quotes a name (MySQL). */
  readonly backtickQuotes: boolean;
  /** `#` starts a line comment (MySQL). */
  readonly hashComments: boolean;
  /** `$1` is a positional marker and `$tag$...$tag$` a string (PostgreSQL). */
  readonly dollarSigns: boolean;
  /** How a bound value is written: `$1`, `$2` (a name used twice binds once), or `?` for each use. */
  readonly bind: 'numbered' | 'question-mark';
}

/**
 * What the processes that never load the daemon's code (the `hanactl` command, URL parsing in
 * every process, curated-tool checks) know of one engine. Everything else one engine is lives in
 * `daemon/engines/<engine>/`, listed in `daemon/engines/index.ts`.
 */
export interface EngineSpec {
  /** The engine's name as people read it in messages. */
  readonly label: string;
  /** The URL schemes listed in messages; the first is the one hanactl writes. */
  readonly schemes: readonly string[];
  /** Further schemes accepted and kept for display, not listed in messages (`postgresql`). */
  readonly aliases?: readonly string[];
  /**
   * `file`: `<scheme>:<path>`, a local file with no server and no password (a relative path is
   * resolved where the URL is read). `server`: `<scheme>://user@host:port/database?options`.
   */
  readonly address: 'file' | 'server';
  /** A server's port when the URL gives none (the host can decide it: HANA Cloud's 443). */
  readonly defaultPort?: (host: string) => number;
  /** An example URL for help and error messages. */
  readonly example: string;
  /** The query options the engine's URL accepts; any other is refused when the URL is read. */
  readonly urlOptions: readonly string[];
  /** Option names match in any case, as the engine's client's do (SAP HANA). */
  readonly optionNamesIgnoreCase?: boolean;
  readonly placeholders: PlaceholderSyntax;
  /**
   * What `hanactl add`/`set` warns a person declaring context names on a connection of this
   * engine, when the engine cannot keep callers apart with them; undefined when it can.
   */
  readonly contextWarning?: (connection: string) => string;
}

const QUESTION_MARKS: PlaceholderSyntax = {
  backslashEscapes: false,
  backtickQuotes: false,
  hashComments: false,
  dollarSigns: false,
  bind: 'question-mark',
};

/**
 * The engines hanactl serves, one entry each, in the order they are listed to people. Adding an
 * engine adds one entry here (what clients need to know of it) and one row to
 * `daemon/engines/index.ts` (everything else, in its own folder).
 */
export const ENGINE_SPECS = {
  sqlite: {
    label: 'SQLite',
    schemes: ['sqlite'],
    address: 'file',
    example: 'sqlite:./data.db',
    urlOptions: ['mode'],
    placeholders: QUESTION_MARKS,
    // SQLite has no grants: an agent that can read a view built on mcp_context() can read its base
    // table too, so context values there select rows but separate nothing (docs/context-parameters.md).
    contextWarning: (name) =>
      `warning: "${name}" is a SQLite file, and SQLite has no grants: mcp_context() gives each session its own values to select by, but an agent can read every table of the file, so context values do not keep one caller from another's rows. Put rows that must stay apart in separate files (one connection each), or use PostgreSQL or MariaDB with the recipe in docs/context-parameters.md.`,
  },
  postgres: {
    label: 'PostgreSQL',
    schemes: ['postgres'],
    aliases: ['postgresql'],
    address: 'server',
    defaultPort: () => 5432,
    example: 'postgres://user@localhost:5432/db',
    urlOptions: ['sslmode', 'application_name', 'search_path', 'schema'],
    placeholders: { ...QUESTION_MARKS, dollarSigns: true, bind: 'numbered' },
  },
  mysql: {
    label: 'MySQL/MariaDB',
    schemes: ['mysql', 'mariadb'],
    address: 'server',
    defaultPort: () => 3306,
    example: 'mysql://user@localhost:3306/db',
    urlOptions: ['ssl', 'sslmode', 'ssl-mode', 'sslca', 'sslcert', 'sslkey', 'socket'],
    placeholders: { ...QUESTION_MARKS, backslashEscapes: true, backtickQuotes: true, hashComments: true },
  },
  hana: {
    label: 'SAP HANA',
    schemes: ['hana'],
    address: 'server',
    // A HANA Cloud host without a port is on 443 (shared/hana-endpoint.ts), as its bindings are.
    defaultPort: (host) => hanaEndpointDefaults(host, undefined).port,
    example: 'hana://user@host:30015/TENANT?encrypt=true',
    // Kinds and aliases of these: daemon/engines/hana/connect-options.ts.
    urlOptions: [
      'encrypt',
      'sslValidateCertificate',
      'sslCryptoProvider',
      'sslTrustStore',
      'sslHostNameInCertificate',
      'sslSNIHostname',
      'sslUseDefaultTrustStore',
      'sslMinProtocolVersion',
      'sslMaxProtocolVersion',
      'currentSchema',
      'databaseName',
      'locale',
      'compress',
      'reconnect',
      'distribution',
      'proxyHost',
      'proxyPort',
      'proxyUserName',
      'proxyHttp',
      'proxyScpAccount',
      'schema',
      'validate_certificate',
      'hostname_in_certificate',
    ],
    optionNamesIgnoreCase: true,
    placeholders: QUESTION_MARKS,
  },
} as const satisfies Record<string, EngineSpec>;

export type Engine = keyof typeof ENGINE_SPECS;

/** The engines hanactl serves: the one list every process boundary and URL reader uses. */
export const ENGINES = Object.keys(ENGINE_SPECS) as [Engine, ...Engine[]];

/** What clients know of `engine`. */
export function engineSpec(engine: Engine): EngineSpec {
  return ENGINE_SPECS[engine];
}

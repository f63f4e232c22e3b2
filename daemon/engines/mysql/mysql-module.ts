/**
 * The smallest slice of `mysql2` (callback API) the driver uses. Typing the package by this
 * interface keeps it an implementation detail: it loads only when a MySQL connection is opened,
 * and anything shaped like it fits.
 */

/** A column definition packet as mysql2 parses it. */
export interface MysqlField {
  readonly name: string;
  /** Protocol type code (`MYSQL_TYPE_*`). */
  readonly columnType: number;
  readonly flags: number;
  /** Collation id; 63 means binary. */
  readonly characterSet: number;
  readonly columnLength: number;
  readonly decimals: number;
  /** MariaDB extended metadata: `uuid`, `inet6`, `point`, ... */
  readonly extendedTypeName?: string;
  /** MariaDB extended metadata: `json` for JSON columns (LONGTEXT on the wire). */
  readonly extendedFormat?: string;
}

/** The OK packet a statement without a result set answers with. */
export interface MysqlResultHeader {
  readonly affectedRows: number;
}

/** What mysql2 puts on the errors it reports (server errors and socket errors alike). */
export interface MysqlError extends Error {
  readonly code?: string;
  readonly errno?: number;
  readonly sqlState?: string;
  readonly fatal?: boolean;
}

/** A running Query or Execute command in its event-emitter form (no callback given). */
export interface MysqlCommand {
  on(event: 'fields', listener: (fields: MysqlField[] | undefined) => void): this;
  on(event: 'result', listener: (row: unknown) => void): this;
  on(event: 'error', listener: (err: MysqlError) => void): this;
  on(event: 'end', listener: () => void): this;
}

export interface MysqlCommandOptions {
  readonly sql: string;
  readonly rowsAsArray?: boolean;
}

type Callback = (err: MysqlError | null) => void;

/** One physical mysql2 connection. */
export interface MysqlRawConnection {
  /** The server's connection id, known once the handshake is done. */
  readonly threadId: number | null;
  /** mysql2 keeps the connect options here, password included (made non-enumerable after connect). */
  readonly config: object;
  connect(callback: Callback): void;
  /** Text protocol; values (if any) are escaped client-side. */
  query(options: MysqlCommandOptions, callback: (err: MysqlError | null, result?: unknown) => void): unknown;
  query(options: MysqlCommandOptions): MysqlCommand;
  /** Server-side prepared statement (COM_STMT_PREPARE, cached per connection, then COM_STMT_EXECUTE). */
  execute(options: MysqlCommandOptions, values: readonly unknown[]): MysqlCommand;
  ping(callback: Callback): void;
  /** COM_RESET_CONNECTION: rolls back and clears user variables, locks, prepared statements and session settings. */
  reset(callback: Callback): void;
  /** Graceful: queues COM_QUIT behind running commands. */
  end(callback?: Callback): void;
  /** Refuses further commands and half-closes the socket; running commands are not told. */
  destroy(): void;
  /** The socket, for a hard close. */
  readonly stream?: { destroy(): void };
  on(event: 'error', listener: (err: MysqlError) => void): this;
  on(event: 'end', listener: () => void): this;
}

/** Options passed to `createConnection`; only the ones the driver sets. */
export interface MysqlConnectOptions {
  readonly host?: string;
  readonly port?: number;
  readonly socketPath?: string;
  readonly user?: string;
  readonly password?: string;
  readonly database?: string;
  readonly connectTimeout: number;
  readonly multipleStatements: false;
  readonly supportBigNumbers: true;
  readonly bigNumberStrings: true;
  readonly decimalNumbers: false;
  readonly dateStrings: readonly 'DATE'[];
  readonly timezone: 'Z';
  readonly charset: string;
  readonly maxPreparedStatements: number;
  readonly disableEval: true;
  readonly flags: string[];
  readonly ssl?: MysqlTlsOptions;
}

export interface MysqlTlsOptions {
  readonly rejectUnauthorized: boolean;
  readonly minVersion: 'TLSv1.2';
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly checkServerIdentity?: () => undefined;
}

export interface MysqlModule {
  createConnection(options: MysqlConnectOptions): MysqlRawConnection;
}

/** Loads mysql2 on first use only; a daemon without MySQL connections never pays for it. */
export async function loadMysqlModule(): Promise<MysqlModule> {
  const mod = (await import('mysql2')) as unknown as { default?: MysqlModule } & Partial<MysqlModule>;
  const api = mod.default ?? (mod as MysqlModule);
  return api;
}

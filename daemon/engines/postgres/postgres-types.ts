/**
 * The smallest slice of `pg` the driver uses, so the packages stay
 * swappable and the driver's surface is explicit.
 */
export interface PgField {
  readonly name: string;
  readonly dataTypeID: number;
}

export interface PgQueryResult {
  readonly rows: unknown[][];
  readonly fields: PgField[];
  readonly rowCount: number | null;
  readonly command: string;
}

export interface PgClient {
  readonly processID?: number;
  /** The key that, with processID, names this session in a CancelRequest. */
  readonly secretKey?: number;
  readonly host?: string;
  readonly port?: number;
  /** The login the client authenticates as (pg fills it from the configuration, PGUSER or the OS user). */
  readonly user?: string;
  connect(): Promise<void>;
  /** The transaction status the server last reported: 'I' outside any transaction, 'T' in one, 'E' in a failed one. */
  getTransactionStatus?(): string | null;
  query(config: { text: string; values?: unknown[]; rowMode: 'array' }): Promise<PgQueryResult>;
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  query<T>(submittable: T): T;
  end(): Promise<void>;
  on(event: 'error', listener: (err: Error) => void): void;
  on(event: 'end', listener: () => void): void;
  /** pg's wire connection; its stream is the socket (or TLS socket) once connected. */
  readonly connection?: { readonly stream?: CorkableStream };
}

/** The part of a Node writable stream that write coalescing needs. */
export interface CorkableStream {
  write(chunk: unknown, ...rest: unknown[]): boolean;
  cork(): void;
  uncork(): void;
}

export interface PgClientConfig {
  host?: string;
  port?: number;
  user?: string;
  database?: string;
  connectionTimeoutMillis: number;
  application_name: string;
  ssl?: boolean | { rejectUnauthorized: boolean };
  options?: string;
}

export interface PgModule {
  Client: new (config: PgClientConfig & { password?: string }) => PgClient;
  types: { builtins: Record<string, number> };
}

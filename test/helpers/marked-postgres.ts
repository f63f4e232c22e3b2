import pg from 'pg';
import { loadDriverFactory } from '../../daemon/engines/index.js';
import { DEFAULT_POOL_OPTIONS, Pool, type PoolOptions } from '../../daemon/pools/pool.js';
import { parseConnectionUrl } from '../../shared/connection-url.js';
import { PG_URL } from './engines.js';

/** A real driver's pool whose server sessions carry `marker` as application_name, and an admin client to watch them. */
export interface MarkedPostgres {
  readonly pool: Pool;
  readonly admin: pg.Client;
  readonly marker: string;
  /** Ends the pool, terminates any backend of the marker still running, and closes the admin client. */
  end(): Promise<void>;
}

export async function openMarkedPostgres(marker: string, options: Partial<PoolOptions>): Promise<MarkedPostgres> {
  const { target, password } = parseConnectionUrl(PG_URL);
  const driver = (await loadDriverFactory('postgres'))(
    { ...target, options: { ...target.options, application_name: marker } },
    password !== undefined ? { password } : {},
    { connectTimeoutMs: 5000 },
  );
  const pool = new Pool(() => driver.connect(), { ...DEFAULT_POOL_OPTIONS, min: 0, ...options }, 'test');
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  return {
    pool,
    admin,
    marker,
    async end() {
      await pool.end();
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [marker]).catch(() => {});
      await admin.end();
    },
  };
}

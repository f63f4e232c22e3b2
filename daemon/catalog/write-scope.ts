import { isHanactlError } from '../../shared/errors.js';
import { DEFAULT_TIMEOUT_MS } from '../../shared/schemas.js';
import type { Lease } from '../pools/pool.js';
import type { ConnectionRecord } from '../registry/connection-record.js';
import type { CatalogExecutor } from './catalog.js';

/**
 * Runs `work` with an executor whose statements all go to one borrowed connection and may
 * write (autocommit). Only for statements a catalog generated; today that is SAP HANA's
 * explain, whose `EXPLAIN PLAN` stores rows in EXPLAIN_PLAN_TABLE, reads them back and deletes
 * them. The explained statement itself has passed the read-only validator and is only planned.
 * No context values are set (a plan returns no rows); the driver still clears any left from
 * an earlier borrower, as on every call.
 */
export type WriteScope = <T>(connection: string, work: (run: CatalogExecutor) => Promise<T>) => Promise<T>;

export interface LeasedWriteScopeDeps {
  resolve(name: string): ConnectionRecord;
  poolFor(record: ConnectionRecord): Promise<{ pool: { acquire(): Promise<Lease> } }>;
  readonly timeoutMs?: number;
}

/**
 * A write scope on the daemon's pools: borrow, run every statement of `work` with
 * `readOnly: false`, release (destroying the connection after anything but a statement error;
 * the pool's reset cleans the session before the next borrower).
 */
export function leasedWriteScope(deps: LeasedWriteScopeDeps): WriteScope {
  const timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return async (connection, work) => {
    const { pool } = await deps.poolFor(deps.resolve(connection));
    const lease = await pool.acquire();
    let failure: unknown;
    try {
      return await work(
        async (sql, params, maxRows) => (await lease.connection.execute(sql, params, { maxRows, timeoutMs, readOnly: false })).rows,
      );
    } catch (err) {
      if (!isHanactlError(err) || !['QUERY_FAILED', 'STATEMENT_REFUSED'].includes(err.code)) failure = err;
      throw err;
    } finally {
      lease.release(failure);
    }
  };
}

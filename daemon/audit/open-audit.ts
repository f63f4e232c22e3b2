import { AuditLog } from './audit-log.js';
import { AuditStore } from './audit-store.js';
import { startRetention } from './retention.js';

/** The daemon log's shape that the audit trail reports to (pino fits). */
export interface AuditLogger {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** The opened audit trail: the log calls are recorded in, and how to close it. */
export interface OpenedAudit {
  readonly log: AuditLog;
  /** Stops the daily prune, writes what is queued and closes the file. */
  close(): void;
}

/**
 * Opens `$HANACTL_HOME/audit.db` (0600, WAL, encrypted under `key`), prunes records older than `days` now and daily,
 * and reports failed writes and prunes to the daemon log, never the records themselves.
 */
export function openAudit(path: string, days: number, logger: AuditLogger, key?: Buffer): OpenedAudit {
  const store = AuditStore.open(path, key, (note) => logger.info({ path }, note));
  const log = new AuditLog(store, {
    onError: (err, dropped) =>
      logger.error({ err: err instanceof Error ? err.message : String(err), dropped }, 'audit records could not be written'),
  });
  const stopRetention = startRetention(log, {
    days,
    onPruned: (count, cutoff) => {
      if (count > 0) logger.info({ count, before: cutoff.toISOString() }, 'audit records pruned');
    },
    onError: (err) => logger.error({ err: err instanceof Error ? err.message : String(err) }, 'audit prune failed'),
  });
  return {
    log,
    close: () => {
      stopRetention();
      log.close();
    },
  };
}

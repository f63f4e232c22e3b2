import type { AuditLog } from './audit-log.js';

/** Days of audit records kept when neither `--audit-days` nor config `auditDays` says otherwise. */
export const DEFAULT_AUDIT_DAYS = 30;

const DAY_MS = 86_400_000;

export interface RetentionOptions {
  /** Records older than this many days are deleted. */
  readonly days: number;
  /** How often to prune after the first time; a day unless a test says otherwise. */
  readonly intervalMillis?: number;
  readonly now?: () => Date;
  /** Told how many records a prune deleted (for the log). */
  readonly onPruned?: (count: number, cutoff: Date) => void;
  readonly onError?: (err: unknown) => void;
}

/**
 * Keeps the audit trail to `days`: prunes now, then every `intervalMillis` on an unref'd
 * timer. Returns the function that stops it.
 */
export function startRetention(log: Pick<AuditLog, 'pruneBefore'>, options: RetentionOptions): () => void {
  if (!Number.isInteger(options.days) || options.days < 1)
    throw new RangeError(`days must be a whole number of at least 1, not ${options.days}`);
  const now = options.now ?? (() => new Date());
  const prune = () => {
    const cutoff = new Date(now().getTime() - options.days * DAY_MS);
    try {
      const count = log.pruneBefore(cutoff);
      options.onPruned?.(count, cutoff);
    } catch (err) {
      options.onError?.(err);
    }
  };
  prune();
  const timer = setInterval(prune, options.intervalMillis ?? DAY_MS);
  timer.unref();
  return () => clearInterval(timer);
}

import { type ErrorDetails, HanactlError } from '../../shared/errors.js';

/** Why a running statement was stopped: its time limit passed, or its caller cancelled it. */
export type StopReason = 'timeout' | 'cancelled';

/**
 * The one QUERY_TIMEOUT every engine reports for a statement stopped at its time limit, by the
 * daemon's own deadline or the server's (`statement_timeout`, `max_statement_time`, ...).
 * `timeoutMs` is the call's limit; `details` keeps the database's SQLSTATE and error number.
 */
export function statementTimedOut(timeoutMs: number | undefined, details: ErrorDetails = {}): HanactlError {
  const limit = timeoutMs === undefined ? 'its time limit' : `its time limit of ${timeoutMs} ms`;
  return new HanactlError(
    'QUERY_TIMEOUT',
    `The statement ran past ${limit} and was stopped. Narrow it (WHERE, LIMIT) or ask for a longer timeout (timeoutMs).`,
    details,
  );
}

/** The one QUERY_CANCELLED every engine reports for a statement its caller cancelled (before or while it ran). */
export function statementCancelled(details: ErrorDetails = {}): HanactlError {
  return new HanactlError(
    'QUERY_CANCELLED',
    'The statement was cancelled before it finished and was stopped. Run it again only if its result is still wanted.',
    details,
  );
}

/** The error for `reason`: statementTimedOut or statementCancelled. */
export function stopError(reason: StopReason, timeoutMs: number | undefined, details: ErrorDetails = {}): HanactlError {
  return reason === 'cancelled' ? statementCancelled(details) : statementTimedOut(timeoutMs, details);
}

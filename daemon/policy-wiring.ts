import { HanactlError } from '../shared/errors.js';
import { assertStatementAllowed } from './policy/index.js';
import { OFF_THREAD_CHARS, OffThreadPolicy } from './policy/off-thread.js';
import type { StatementPolicy } from './query/query-service.js';

/**
 * The statement policy the daemon runs before borrowing a connection: the read-only
 * validator (skeletonize, then a chain of rules). The read-only session and the rolled-back
 * transaction are the layers behind it. Long statements are judged on a worker thread
 * (OffThreadPolicy), so that the daemon keeps answering meanwhile.
 */
export function createStatementPolicy(offThread: OffThreadPolicy = new OffThreadPolicy()): StatementPolicy {
  return {
    check: (sql, options) => {
      if (sql.length < OFF_THREAD_CHARS) return assertStatementAllowed(sql, options);
      return offThread.check(sql, options).then((verdict) => {
        if (!verdict.ok) throw new HanactlError('STATEMENT_REFUSED', verdict.message, { rule: verdict.rule, hint: verdict.hint });
        return verdict.kind;
      });
    },
  };
}

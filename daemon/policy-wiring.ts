import { assertStatementAllowed } from './policy/index.js';
import type { StatementPolicy } from './query/query-service.js';

/**
 * The statement policy the daemon runs before borrowing a connection: the read-only
 * validator (skeletonize, then a chain of rules). The read-only session and the rolled-back
 * transaction are the layers behind it.
 */
export function createStatementPolicy(): StatementPolicy {
  return { check: assertStatementAllowed };
}

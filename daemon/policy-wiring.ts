import type { StatementPolicy } from './query/query-service.js';

/**
 * The statement policy the daemon runs before borrowing a connection. Until the validator
 * lands, reads are protected by the read-only transaction that every read call runs in and
 * that is always rolled back.
 */
export function createStatementPolicy(): StatementPolicy {
  return { check: (_sql, { allowWrite }) => (allowWrite ? 'write' : 'read') };
}

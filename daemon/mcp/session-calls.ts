import { HanactlError } from '../../shared/errors.js';
import { asCheckOwner } from '../policy/check-owner.js';
import type { CallGate } from './limited-broker.js';

/**
 * Calls one MCP session may have running at once, on any of its connections, unless config.json
 * sets `perSession.maxConcurrentCalls`: half the daemon's pool setting (at least one). What one
 * session may hold of each connection pool is the pool's own share, from that pool's real size
 * (pool.ts perSessionShare: an engine's pool may be smaller than the setting, SQLite's is 4).
 */
export function defaultMaxCallsPerSession(poolMax: number): number {
  return Math.max(1, Math.floor(poolMax / 2));
}

/**
 * The gate of one session's database calls: at most `max` run at once; the next ones wait in
 * order for one to finish, up to twice `max` waiting; one more is refused at once
 * (TOO_MANY_CALLS, naming the limit). Each call's statement checks are queued as `owner`'s
 * (check-owner.ts), so checks take turns between sessions.
 */
export function sessionGate(max: number, owner: string): CallGate {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (call) => {
    if (running >= max) {
      if (waiting.length >= 2 * max)
        throw new HanactlError(
          'TOO_MANY_CALLS',
          `This session already has ${max} calls running and ${waiting.length} waiting, the limit per session (perSession.maxConcurrentCalls in config.json; twice as many may wait); wait for one to finish, then retry.`,
        );
      await new Promise<void>((resolve) => waiting.push(resolve));
    } else running++;
    try {
      return await asCheckOwner(owner, call);
    } finally {
      // The slot passes to the next waiting call, or is freed.
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

import { createHash } from 'node:crypto';
import { formatTarget, type Target } from '../../shared/connection-url.js';
import type { PoolStats } from '../../shared/schemas.js';
import type { Driver, DriverFactory } from '../engines/driver.js';
import type { ConnectionRecord } from '../registry/connection-record.js';
import { Pool, type PoolOptions } from './pool.js';

export interface PoolManagerOptions {
  readonly pool: PoolOptions;
  /** The pool settings a person chose (config.json); they win over an engine's own defaults. */
  readonly chosenPool?: Partial<PoolOptions>;
  readonly connectTimeoutMs: number;
  /** Pools beyond this many are closed, least recently used first. */
  readonly maxPools: number;
  readonly loadDriverFactory: (engine: Target['engine']) => Promise<DriverFactory>;
}

/** Pool keys per record object: records are cached and immutable, so each is hashed once. */
const KEYS = new WeakMap<object, string>();

interface Entry {
  readonly pool: Pool;
  readonly driver: Driver;
  readonly target: Target;
  readonly names: Set<string>;
}

/**
 * One pool per resolved target, shared by every session: two names for the same target
 * (and the same credentials) share a pool, and switching back to a name reuses its pool.
 */
export class PoolManager {
  readonly #options: PoolManagerOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #creating = new Map<string, Promise<Entry>>();

  constructor(options: PoolManagerOptions) {
    this.#options = options;
  }

  /** The pool key: a hash of the target and its secret, so a changed password gets a new pool. */
  static keyFor(record: Pick<ConnectionRecord, 'target' | 'password'>): string {
    const cached = KEYS.get(record);
    if (cached) return cached;
    const key = PoolManager.#computeKey(record);
    KEYS.set(record, key);
    return key;
  }

  static #computeKey(record: Pick<ConnectionRecord, 'target' | 'password'>): string {
    const { scheme: _scheme, ...rest } = record.target;
    const canonical = JSON.stringify(rest, Object.keys(rest).sort());
    const options = JSON.stringify(Object.entries(record.target.options).sort());
    return createHash('sha256')
      .update(`${canonical}\0${options}\0${record.password ?? ''}`)
      .digest('hex')
      .slice(0, 16);
  }

  /** The pool for a connection, created (and its driver loaded) on first use. */
  async poolFor(record: ConnectionRecord): Promise<{ pool: Pool; driver: Driver }> {
    const key = PoolManager.keyFor(record);
    let entry = this.#entries.get(key);
    if (!entry) {
      let creating = this.#creating.get(key);
      if (!creating) {
        creating = this.#create(key, record).finally(() => this.#creating.delete(key));
        this.#creating.set(key, creating);
      }
      entry = await creating;
    }
    entry.names.add(record.name);
    return { pool: entry.pool, driver: entry.driver };
  }

  async #create(key: string, record: ConnectionRecord): Promise<Entry> {
    const factory = await this.#options.loadDriverFactory(record.target.engine);
    const secret = {};
    Object.defineProperty(secret, 'password', { value: record.password, enumerable: false });
    const driver = factory(record.target, secret, { connectTimeoutMs: this.#options.connectTimeoutMs });
    const options = { ...this.#options.pool, ...driver.poolDefaults, ...this.#options.chosenPool };
    const pool = new Pool(() => driver.connect(), options, formatTarget(record.target));
    void pool.warm();
    const entry: Entry = { pool, driver, target: record.target, names: new Set([record.name]) };
    this.#entries.set(key, entry);
    this.#evictBeyondCap(key);
    return entry;
  }

  /** Closes idle pools, least recently used first; never `keep`, the pool just made for a caller. */
  #evictBeyondCap(keep: string): void {
    while (this.#entries.size > this.#options.maxPools) {
      let oldest: [string, Entry] | undefined;
      for (const item of this.#entries) {
        const { pool } = item[1];
        if (item[0] === keep || pool.inUseCount > 0 || pool.waitingCount > 0 || pool.endingCount > 0) continue;
        if (!oldest || item[1].pool.lastUsedAt < oldest[1].pool.lastUsedAt) oldest = item;
      }
      if (!oldest) return;
      this.#entries.delete(oldest[0]);
      void oldest[1].pool.end();
    }
  }

  /** Closes the pools a connection's old definition used (after remove or replace). */
  async forget(record: ConnectionRecord): Promise<void> {
    const key = PoolManager.keyFor(record);
    const entry = this.#entries.get(key);
    if (!entry) return;
    entry.names.delete(record.name);
    if (entry.names.size === 0) {
      this.#entries.delete(key);
      await entry.pool.end();
    }
  }

  stats(): PoolStats[] {
    return [...this.#entries].map(([key, { pool, target, names }]) => ({
      key,
      engine: target.engine,
      target: formatTarget(target),
      connections: [...names].sort(),
      total: pool.totalCount,
      idle: pool.idleCount,
      inUse: pool.inUseCount,
      waiting: pool.waitingCount,
      ending: pool.endingCount,
      created: pool.created,
      destroyed: pool.destroyed,
      errors: pool.errors,
      max: pool.options.max,
      min: pool.options.min,
      perSession: pool.perSession,
    }));
  }

  async closeAll(): Promise<void> {
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    await Promise.all(entries.map((e) => e.pool.end()));
  }
}

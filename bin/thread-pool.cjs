'use strict';
// Sizes libuv's thread pool for SAP HANA before anything uses it (docs/engines/hana.md).
// @sap/hana-client runs each statement on a pool thread for as long as it runs, and its abort()
// (how a timeout or a cancel stops a statement) needs one more: with Node's default of 4
// threads, four long statements leave no thread to cancel them. Plain CommonJS with no
// dependencies, so the entry can run it first.
const { readFileSync } = require('node:fs');
const { homedir } = require('node:os');
const { join, resolve } = require('node:path');

/** Threads Node itself keeps busy (fs, dns, crypto, zlib): its own default pool size. */
const NODE_OWN = 4;
/** libuv's ceiling. */
const LIBUV_MAX = 1024;
/** daemon/pools/pool.ts DEFAULT_POOL_OPTIONS.max (a test keeps the two equal). */
const DEFAULT_POOL_MAX = 10;

/**
 * The pool size for `poolMax` connections per pool: a thread for each running statement, one
 * for each cancel, and Node's own four. A size the person set (`current`) is kept when large enough.
 */
function threadPoolSize(poolMax, current) {
  const needed = Math.min(LIBUV_MAX, NODE_OWN + 2 * poolMax);
  const own = Number(current);
  return Number.isInteger(own) && own >= needed && own <= LIBUV_MAX ? own : needed;
}

/** `pool.max` from `$HANACTL_HOME/config.json` (as shared/paths.ts finds it), else the default. */
function configuredPoolMax(env) {
  try {
    const home = env.HANACTL_HOME ? resolve(env.HANACTL_HOME) : join(homedir(), '.hanactl');
    const max = JSON.parse(readFileSync(join(home, 'config.json'), 'utf8'))?.pool?.max;
    return Number.isInteger(max) && max >= 1 ? max : DEFAULT_POOL_MAX;
  } catch {
    return DEFAULT_POOL_MAX;
  }
}

/**
 * Sets `UV_THREADPOOL_SIZE` (and, unless the person set it, `HDB_NODEJS_THREADPOOL_SIZE`, the
 * number of those threads @sap/hana-client may use) in `env`; returns the size.
 */
function sizeThreadPool(env) {
  const size = threadPoolSize(configuredPoolMax(env), env.UV_THREADPOOL_SIZE);
  env.UV_THREADPOOL_SIZE = String(size);
  if (!env.HDB_NODEJS_THREADPOOL_SIZE) env.HDB_NODEJS_THREADPOOL_SIZE = String(size - NODE_OWN);
  return size;
}

module.exports = { DEFAULT_POOL_MAX, configuredPoolMax, sizeThreadPool, threadPoolSize };

import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { TestHome } from '../../helpers/hanactl-home.js';
import { killHome } from './procs.js';

/**
 * The daemon set-up the fuzz suites share: `dir/lite.db`, a SQLite file with a table
 * `t (id INTEGER PRIMARY KEY, name TEXT)` holding rows 'a' and 'b', registered in `home` as the
 * connection `lite` (which starts the daemon). Resolves to the daemon's pid.
 */
export async function startLiteDaemon(home: TestHome, dir: string): Promise<number> {
  const Database = createRequire(import.meta.url)('better-sqlite3-multiple-ciphers');
  const db = new Database(join(dir, 'lite.db'));
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t (name) VALUES ('a'), ('b');");
  db.close();
  await home.ok(['add', '--no-test', 'lite', `sqlite:${join(dir, 'lite.db')}`]);
  return daemonPid(home);
}

/** The pid of the daemon serving `home`, as `hanactl daemon status --json` reports it. */
export async function daemonPid(home: TestHome): Promise<number> {
  return JSON.parse((await home.ok(['daemon', 'status', '--json'])).stdout).pid;
}

/** Stops the daemon of `home`, kills whatever process of it is left, and removes `dirs` and the home. */
export async function disposeHome(home: TestHome, ...dirs: string[]): Promise<void> {
  await home.stop();
  killHome(home.dir);
  for (const dir of [...dirs, home.dir]) rmSync(dir, { recursive: true, force: true });
}

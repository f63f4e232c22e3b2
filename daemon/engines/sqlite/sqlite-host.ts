/**
 * The child process behind one `SqliteConnection`: started with `child_process.fork`, it opens
 * one SQLite file and answers the requests of `sqlite-protocol.ts` one at a time. Running the
 * synchronous better-sqlite3 calls here keeps the daemon's event loop free, and a runaway
 * statement is stopped by killing this process (SQLite's interrupt is not exposed).
 *
 * It never outlives the daemon: it exits when the IPC channel closes, and when its parent is gone
 * even while a statement holds the main thread, through the parent-death signal the kernel sends
 * (see `sqlite-host-launch.ts`) or, where that is not available, a watchdog thread.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { HanactlError } from '../../../shared/errors.js';
import { normaliseDriverError } from '../scrub.js';
import type { HostError, HostReply, HostRequest, HostResults } from './sqlite-protocol.js';
import { type SqliteDatabase, SqliteSession } from './sqlite-session.js';

type SqliteConstructor = new (path: string, options: { readonly?: boolean; fileMustExist?: boolean; timeout?: number }) => SqliteDatabase;

const require = createRequire(import.meta.url);

/** How often the watchdog checks that the daemon is still this process's parent. */
const WATCHDOG_INTERVAL_MS = 500;

const WATCHDOG_SOURCE = `
const { workerData } = require('node:worker_threads');
setInterval(() => {
  if (process.ppid !== workerData.ppid) process.kill(process.pid, 'SIGKILL');
}, workerData.intervalMs);
`;

let session: SqliteSession | undefined;

function open(path: string, readonly: boolean): void {
  if (session) throw new HanactlError('INTERNAL', 'The SQLite worker was asked to open a second database.');
  const Database = require('better-sqlite3-multiple-ciphers') as SqliteConstructor;
  try {
    const db = new Database(path, { readonly, fileMustExist: path !== ':memory:', timeout: 5000 });
    db.pragma('schema_version', { simple: true }); // reads the header: a file that is not a database fails here, not on first use
    session = new SqliteSession(db);
  } catch (err) {
    throw new HanactlError('CONNECT_FAILED', `Cannot open the SQLite file ${path}: ${(err as Error).message}`);
  }
}

function opened(): SqliteSession {
  if (!session) throw new HanactlError('INTERNAL', 'The SQLite worker received a request before its database was opened.');
  return session;
}

function run(req: HostRequest): HostResults[HostRequest['op']] {
  switch (req.op) {
    case 'open':
      open(req.path, req.readonly);
      return null;
    case 'execute':
      opened().setContext(req.context);
      return opened().execute(req.sql, req.params, {
        maxRows: req.maxRows,
        readOnly: req.readOnly,
        ...(req.maxBytes !== undefined ? { maxBytes: req.maxBytes } : {}),
      });
    case 'ping':
      opened().ping();
      return null;
    case 'reset':
      opened().reset();
      return null;
    case 'version':
      return opened().version();
    case 'setContext':
      opened().setContext(req.values);
      return null;
    case 'close':
      session?.close();
      return null;
    default:
      throw new HanactlError('INTERNAL', `The SQLite worker does not know the request "${(req as { op: string }).op}".`);
  }
}

function toHostError(err: unknown): HostError {
  const e = err instanceof HanactlError ? err : normaliseDriverError(err, 'QUERY_FAILED', codeOf(err));
  return { code: e.code, message: e.message, details: { ...e.details } };
}

function codeOf(err: unknown): { nativeCode?: string } {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? { nativeCode: code } : {};
}

function onMessage(req: HostRequest): void {
  let reply: HostReply;
  try {
    reply = { id: req.id, ok: true, value: run(req) };
  } catch (err) {
    reply = { id: req.id, ok: false, error: toHostError(err) };
  }
  // After a close, or when the connection could not be put back as it was opened, this process
  // has no more use.
  const last = req.op === 'close' || session?.broken === true;
  if (last && req.op !== 'close') reply = { ...reply, retiring: true };
  process.send?.(reply, undefined, undefined, () => {
    if (last) process.exit(0);
  });
}

function startWatchdog(): void {
  const worker = new Worker(WATCHDOG_SOURCE, { eval: true, workerData: { ppid: process.ppid, intervalMs: WATCHDOG_INTERVAL_MS } });
  worker.unref();
}

if (!process.send) {
  process.stderr.write('sqlite-host is started by the hanactl daemon through child_process.fork, not run directly.\n');
  process.exit(2);
}
process.on('disconnect', () => process.exit(0));
process.on('message', (msg) => onMessage(msg as HostRequest));
// Started through `setpriv --pdeathsig`, the kernel ends this process with the daemon; otherwise
// a watchdog thread does.
if (process.argv.includes('--watch-parent')) startWatchdog();

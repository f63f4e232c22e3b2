import { type ChildProcess, fork } from 'node:child_process';
import { ERROR_CODES, type ErrorCode, HanactlError } from '../../../shared/errors.js';
import { type HostLaunch, hostLaunch } from './sqlite-host-launch.js';
import type { HostCall, HostReply, HostResults } from './sqlite-protocol.js';

interface Pending {
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: HanactlError) => void;
}

/** How long a killed child may take to be reaped before we stop waiting for it. */
const REAP_WAIT_MS = 1000;

/**
 * The daemon's side of one `sqlite-host` child: request/reply over IPC. A request is bounded by
 * its caller (SqliteConnection, with a statement watch that kills the child). Once the child is killed or has exited,
 * every pending and later request fails with QUERY_FAILED. The child keeps the event loop
 * alive only while a request is pending.
 */
export class SqliteHostProcess {
  readonly #child: ChildProcess;
  readonly #pending = new Map<number, Pending>();
  readonly #exited: Promise<void>;
  #nextId = 1;
  #dead: string | undefined;

  constructor(launch: HostLaunch = hostLaunch()) {
    this.#child = fork(launch.modulePath, [...launch.args], {
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      execPath: launch.execPath,
      execArgv: [...launch.execArgv],
      env: { ...launch.env },
    });
    this.#exited = new Promise((resolve) => this.#child.once('exit', () => resolve()));
    this.#child.on('exit', (code, signal) =>
      this.#die(`The SQLite worker process exited (${signal ? `signal ${signal}` : `code ${code}`})`),
    );
    this.#child.on('error', (err) => this.#die(`The SQLite worker process failed: ${err.message}`));
    this.#child.on('message', (msg) => this.#settle(msg as HostReply));
    this.#child.unref();
    this.#child.channel?.unref();
  }

  /** The child's process id (undefined only when it could not be started). */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** False once the child was killed, has exited, or failed. */
  get alive(): boolean {
    return this.#dead === undefined;
  }

  /** Sends one request and waits for its reply; rejects with a `HanactlError` only. */
  request<C extends HostCall>(call: C): Promise<HostResults[C['op']]> {
    if (this.#dead !== undefined) return Promise.reject(this.#deadError(this.#dead));
    const id = this.#nextId++;
    return new Promise<HostResults[C['op']]>((resolve, reject) => {
      const done = (): void => {
        if (this.#pending.size === 0) this.#child.channel?.unref();
      };
      this.#pending.set(id, {
        resolve: (value) => {
          done();
          resolve(value as HostResults[C['op']]);
        },
        reject: (err) => {
          done();
          reject(err);
        },
      });
      this.#child.channel?.ref();
      this.#child.send({ ...call, id }, (err) => {
        if (err) this.#die(`The SQLite worker process could not be reached: ${err.message}`);
      });
    });
  }

  /** SIGKILLs the child and waits (at most 1 s) until it is reaped; never throws. */
  async kill(): Promise<void> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      this.#die('The SQLite worker process was stopped');
      try {
        this.#child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
    await this.#waitForExit(REAP_WAIT_MS);
  }

  /** Resolves when the child has exited, or after `ms`, whichever comes first. */
  async #waitForExit(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.#exited, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }

  /** Asks the child to close its database and exit; kills it when it has not within `graceMs`. */
  async close(graceMs: number): Promise<void> {
    if (this.#dead === undefined) {
      this.request({ op: 'close' }).catch(() => {});
      await this.#waitForExit(graceMs);
    }
    await this.kill();
  }

  #settle(reply: HostReply): void {
    const pending = this.#pending.get(reply.id);
    this.#pending.delete(reply.id);
    // Marked before the caller hears back, so the pool sees a broken connection when it is released.
    if (reply.retiring) this.#die('The SQLite worker ended after its last call');
    if (!pending) return;
    if (reply.ok) pending.resolve(reply.value);
    else pending.reject(rebuild(reply.error.code, reply.error.message, reply.error.details));
  }

  /** Marks the child unusable and fails every pending request with `reason`. */
  #die(reason: string): void {
    this.#dead ??= reason;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.reject(this.#deadError(reason));
  }

  #deadError(reason: string): HanactlError {
    return new HanactlError('QUERY_FAILED', `${reason}; this SQLite connection is closed and will be replaced. Run the statement again.`);
  }
}

function rebuild(code: string, message: string, details: HanactlError['details']): HanactlError {
  const known = (code in ERROR_CODES ? code : 'INTERNAL') as ErrorCode;
  return new HanactlError(known, message, details);
}

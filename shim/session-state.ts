import type { DaemonClient } from '../shared/daemon-client.js';

export interface ShimOptions {
  /** The connection selected when the session starts (`--connection`). */
  readonly connection?: string;
  /** The project folder (`--project`, else the working folder). */
  readonly project?: string;
  /** Context parameter values from the client's configuration (`MCP_CONTEXT_<NAME>`), fixed for the shim's life. */
  readonly context?: Readonly<Record<string, string>>;
}

/**
 * What one agent session has chosen. It lives in this shim alone: two editors can never
 * switch each other's connection.
 */
export class SessionState {
  active: string | null;
  project: string | undefined;
  /** Fixed at start; no tool can change it. */
  readonly context: Readonly<Record<string, string>>;
  client: { name: string; version?: string } = { name: 'unknown' };
  #sessionId: string | undefined;
  #opening: Promise<string | undefined> | undefined;
  readonly #daemon: DaemonClient;

  constructor(daemon: DaemonClient, options: ShimOptions) {
    this.#daemon = daemon;
    this.active = options.connection ?? null;
    this.project = options.project;
    this.context = Object.freeze({ ...options.context });
  }

  /** The daemon-side session id, announced once (best effort: a call works without it). */
  async sessionId(): Promise<string | undefined> {
    if (this.#sessionId) return this.#sessionId;
    this.#opening ??= this.#daemon
      .openSession({
        client: this.client,
        ...(this.project ? { project: this.project } : {}),
        pid: process.pid,
        ...(this.active ? { connection: this.active } : {}),
      })
      .then(
        (s) => (this.#sessionId = s.id),
        () => undefined,
      )
      .finally(() => {
        this.#opening = undefined;
      });
    return this.#opening;
  }

  /** Mirrors a change to the daemon's session table, for `hanactl status`. */
  async announce(): Promise<void> {
    const id = await this.sessionId();
    if (id) await this.#daemon.updateSession(id, { connection: this.active, client: this.client }).catch(() => {});
  }
}

import type { HanaCliEnv } from '../shared/hana-cli-env.js';
import type { Broker } from './broker.js';

export interface ShimOptions {
  /** The connection selected when the session starts (`--connection`). */
  readonly connection?: string;
  /** The project folder (`--project`, else the working folder). */
  readonly project?: string;
  /** Context parameter values from the client's configuration (`MCP_CONTEXT_<NAME>`), fixed for the shim's life. */
  readonly context?: Readonly<Record<string, string>>;
  /** A connection file a person named (`--conn-file`); the daemon reads it, within trust. */
  readonly connFile?: string;
  /** This process's `VCAP_SERVICES`, the last source of the project chain (passed to the daemon, never read back). */
  readonly vcapServices?: string;
  /** This process's `HANA_CLI_*` target (never its password), the first source of the project chain. */
  readonly hanaCli?: HanaCliEnv;
  /**
   * `http`: a session of the daemon's MCP over HTTP endpoint, whose URL fixes `connection`: no
   * use_connection, a call's `connection` may only name it, a project never moves it, and the
   * session has no process of its own (no pid in `hanactl status`). Default `stdio`.
   */
  readonly transport?: 'stdio' | 'http';
  /** How `hanactl status` names the session until the client says who it is (`initialize`). */
  readonly client?: { readonly name: string; readonly version?: string };
  /** What the session had chosen before a daemon restart, restored under the same session id. */
  readonly resume?: { readonly active: string | null; readonly pinned: boolean; readonly project?: string };
}

/**
 * What one agent session has chosen. It lives in this shim alone: two editors can never
 * switch each other's connection.
 */
export class SessionState {
  active: string | null;
  /** The session's project folder: the daemon's root for it once detected, else the hint. */
  project: string | undefined;
  /** The connection a person configured (`--connection`): what a project without connections falls back to. */
  readonly defaultConnection: string | null;
  /** True once the agent chose a registry connection itself; a change of project then keeps it. */
  pinned = false;
  /** True when the endpoint's URL fixed the connection (MCP over HTTP): no tool or project changes it. */
  readonly fixed: boolean;
  /** Fixed at start; no tool can change it. */
  readonly context: Readonly<Record<string, string>>;
  /**
   * Whether a waiting write may also be approved by an answer to the client's elicitation: only
   * for the relay, which the person's own editor started. Over MCP over HTTP the client is
   * whatever program holds the token, so only the terminal approves.
   */
  readonly approvalInClient: boolean;
  client: { name: string; version?: string } = { name: 'unknown' };
  #sessionId: string | undefined;
  #opening: Promise<string | undefined> | undefined;
  #settling: Promise<unknown> = Promise.resolve();
  readonly #daemon: Broker;
  readonly #watchers: (() => void)[] = [];

  constructor(daemon: Broker, options: ShimOptions) {
    this.#daemon = daemon;
    this.active = options.connection ?? null;
    this.defaultConnection = this.active;
    this.project = options.project;
    this.context = Object.freeze({ ...options.context });
    this.fixed = options.transport === 'http' && this.active !== null;
    this.approvalInClient = options.transport !== 'http';
    this.pinned = this.fixed;
    if (options.client) this.client = { ...options.client };
    if (options.resume && !this.fixed) {
      this.active = options.resume.active;
      this.pinned = options.resume.pinned;
      if (options.resume.project) this.project = options.resume.project;
    }
  }

  /** The daemon-side session id, announced once (best effort: a call works without it). */
  async sessionId(): Promise<string | undefined> {
    if (this.#sessionId) return this.#sessionId;
    this.#opening ??= this.#daemon
      .openSession({
        client: this.client,
        ...(this.project ? { project: this.project } : {}),
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

  /** Calls `watcher` whenever the session announces a change (of connection, project or client). */
  watch(watcher: () => void): void {
    this.#watchers.push(watcher);
  }

  /** Mirrors a change to the daemon's session table, for `hanactl status`, and tells the watchers. */
  async announce(): Promise<void> {
    for (const watcher of this.#watchers) watcher();
    const id = await this.sessionId();
    const project = this.project ? { project: this.project } : {};
    if (id)
      await this.#daemon
        .updateSession(id, { connection: this.active, client: this.client, pinned: this.pinned, ...project })
        .catch(() => {});
  }

  /** Queues a change of project (MCP roots, detect_project); changes apply one at a time, in order. */
  queue<T>(change: () => Promise<T>): Promise<T> {
    const next = this.#settling.then(change, change);
    this.#settling = next.catch(() => {});
    return next;
  }

  /** Resolves once queued project changes are applied: tools await it, so no call runs against a half-switched project. */
  async settled(): Promise<void> {
    await this.#settling;
  }
}

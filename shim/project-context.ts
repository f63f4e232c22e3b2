import { fileURLToPath } from 'node:url';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { RootsListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { HanaCliEnv } from '../shared/hana-cli-env.js';
import { type DetectResult, isProjectRef } from '../shared/project-schemas.js';
import type { Broker } from './broker.js';
import type { SessionState } from './session-state.js';

/** How long the client may take to list its roots before the shim falls back to `--project`. */
const ROOTS_TIMEOUT_MS = 5000;

/** Keeps run_query's annotations in line with the active connection. */
export interface QueryAnnotations {
  onActive(allowWrite: boolean): void;
}

/** The first `file://` root the client offers, as a path; undefined when it offers none. */
async function firstRoot(server: McpServer): Promise<string | undefined> {
  if (!server.server.getClientCapabilities()?.roots) return undefined;
  try {
    const { roots } = await server.server.listRoots(undefined, { timeout: ROOTS_TIMEOUT_MS });
    const root = roots.find((r) => r.uri.startsWith('file://'));
    return root ? fileURLToPath(root.uri) : undefined;
  } catch {
    return undefined; // no answer, or a root that is no local path: use the fallback
  }
}

/**
 * The session's project, shim side. It learns the folder from the client's MCP roots (first
 * `file://` root, followed on `roots/list_changed`), else `--project`, else the working folder,
 * and asks the daemon to detect it: the shim reads no project file and holds no secret. A
 * detected project's first connection becomes the active one unless the agent pinned a registry
 * connection; a project without connections (or not trusted) falls back to `--connection`.
 */
export class ProjectContext {
  readonly #daemon: Broker;
  readonly #state: SessionState;
  readonly #annotations: QueryAnnotations;
  readonly #extras: { connFile?: string; vcapServices?: string; hanaCli?: HanaCliEnv };
  readonly #fallback: string | undefined;

  constructor(
    daemon: Broker,
    state: SessionState,
    annotations: QueryAnnotations,
    options: { connFile?: string; vcapServices?: string; hanaCli?: HanaCliEnv },
  ) {
    this.#daemon = daemon;
    this.#state = state;
    this.#annotations = annotations;
    this.#fallback = state.project;
    this.#extras = {
      ...(options.connFile ? { connFile: options.connFile } : {}),
      ...(options.vcapServices !== undefined ? { vcapServices: options.vcapServices } : {}),
      ...(options.hanaCli ? { hanaCli: options.hanaCli } : {}),
    };
  }

  /** Follows the client's roots from now on; call once the client has initialised. */
  start(server: McpServer): void {
    const follow = () => void this.#state.queue(() => this.#follow(server));
    server.server.setNotificationHandler(RootsListChangedNotificationSchema, follow);
    follow();
  }

  /** Detects the project holding `path` and makes it the session's; rejects with the daemon's error (nothing changes then). */
  detect(path: string): Promise<DetectResult> {
    return this.#state.queue(() => this.#switch(path));
  }

  async #follow(server: McpServer): Promise<void> {
    const path = (await firstRoot(server)) ?? this.#fallback;
    if (!path) return;
    try {
      await this.#switch(path);
    } catch {
      // Not trusted, gone, unreadable: the folder is still the session's project (list_connections
      // says why it adds nothing), and the configured connection applies.
      this.#state.project = path;
      await this.#choose(null, undefined);
    }
  }

  async #switch(path: string): Promise<DetectResult> {
    const session = await this.#state.sessionId();
    const result = await this.#daemon.detectProject({ path, ...(session ? { session } : {}), ...this.#extras });
    const previous = this.#state.project;
    this.#state.project = result.root;
    await this.#choose(result.primary, previous === result.root ? result : undefined);
    return result;
  }

  /** Picks the active connection after a change of project. `same` is set when the project did not change. */
  async #choose(primary: string | null, same: DetectResult | undefined): Promise<void> {
    const state = this.#state;
    const kept = state.active && isProjectRef(state.active) && same?.connections.some((c) => c.name === state.active);
    if (!state.pinned && !kept) {
      const next = primary ?? state.defaultConnection;
      if (next !== state.active) {
        state.active = next;
        if (next && isProjectRef(next)) this.#annotations.onActive(false);
        else if (next)
          await this.#daemon.getConnection(next).then(
            (info) => this.#annotations.onActive(info.allowWrite),
            () => {},
          );
      }
    }
    void state.announce();
  }
}

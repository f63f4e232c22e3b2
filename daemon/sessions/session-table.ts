import { randomUUID } from 'node:crypto';
import type { OpenSessionRequest, SessionInfo, SessionUpdate } from '../../shared/schemas.js';

interface Session {
  id: string;
  client: { name: string; version?: string };
  project?: string;
  pid?: number;
  connection: string | null;
  calls: number;
  startedAt: Date;
  lastSeenAt: Date;
}

/**
 * The daemon's view of the shims talking to it, for `hanactl status`. A session's active
 * connection is owned by its shim; the daemon only mirrors it for display.
 */
export class SessionTable {
  readonly #sessions = new Map<string, Session>();
  readonly #staleAfterMs: number;

  constructor(staleAfterMs = 10 * 60_000) {
    this.#staleAfterMs = staleAfterMs;
  }

  /** Lists a session; `id` is the one a relay chose (it resumes under it after a daemon restart), else a new one. */
  open(request: OpenSessionRequest, id: string = randomUUID()): SessionInfo {
    const now = new Date();
    const session: Session = {
      id,
      client: request.client,
      ...(request.project ? { project: request.project } : {}),
      ...(request.pid ? { pid: request.pid } : {}),
      connection: request.connection ?? null,
      calls: 0,
      startedAt: now,
      lastSeenAt: now,
    };
    this.#sessions.set(session.id, session);
    return view(session);
  }

  /** Records activity; an id the daemon does not know (it restarted) is adopted. */
  touch(id: string, update: SessionUpdate = {}, countCall = false): SessionInfo {
    let session = this.#sessions.get(id);
    if (!session) {
      const now = new Date();
      session = { id, client: { name: 'unknown' }, connection: null, calls: 0, startedAt: now, lastSeenAt: now };
      this.#sessions.set(id, session);
    }
    session.lastSeenAt = new Date();
    if (update.client) session.client = update.client;
    if (update.project) session.project = update.project;
    if (update.connection !== undefined) session.connection = update.connection;
    if (countCall) session.calls++;
    return view(session);
  }

  close(id: string): boolean {
    return this.#sessions.delete(id);
  }

  list(): SessionInfo[] {
    const cutoff = Date.now() - this.#staleAfterMs;
    for (const [id, s] of this.#sessions) if (s.lastSeenAt.getTime() < cutoff) this.#sessions.delete(id);
    return [...this.#sessions.values()].map(view);
  }
}

function view(s: Session): SessionInfo {
  return {
    id: s.id,
    client: s.client,
    ...(s.project ? { project: s.project } : {}),
    ...(s.pid ? { pid: s.pid } : {}),
    connection: s.connection,
    calls: s.calls,
    startedAt: s.startedAt.toISOString(),
    lastSeenAt: s.lastSeenAt.toISOString(),
  };
}

import type { SessionInfo } from '../../shared/schemas.js';
import type { SessionTable } from '../sessions/session-table.js';
import type { CallInfo, CallPerson, CallSummary, CallTracker } from './call-tracker.js';

/** Where a call's bookkeeping goes: the session table (`hanactl status`) and the tracker (`hanactl queries`, `cancel`, audit). */
export interface TrackedCallDeps {
  /** Without it, calls run untracked (tests of one route). */
  readonly calls?: Pick<CallTracker, 'track'> | undefined;
  readonly sessions?: Pick<SessionTable, 'touch'> | undefined;
}

/** Who makes a call beyond its body: the signal of the request or tool call, and a signed-in person (MCP over HTTP with OAuth). */
export interface Caller {
  readonly signal?: AbortSignal | undefined;
  readonly person?: CallPerson | undefined;
}

/** One call's own part of its bookkeeping: how the trail names it, what it runs, and what its answer counts. */
export interface TrackedWork<T> {
  /** The session the body names, counted as one call. */
  readonly session: string | undefined;
  describe(session: SessionInfo | undefined): CallInfo;
  /** Gets the call's signal (the caller's, or a person's cancel) and, when tracked, its id. */
  run(signal: AbortSignal | undefined, queryId?: string): Promise<T>;
  summarize(result: T): CallSummary;
}

/**
 * A call's bookkeeping, the same for every tool call and API route that reaches a database: the
 * body's session counts a call, the call is listed while it runs and cancellable by id (its
 * statements stop on the server), and it is audited when it ends, naming the signed-in person.
 */
export function trackCall<T>(deps: TrackedCallDeps, caller: Caller, work: TrackedWork<T>): Promise<T> {
  const session = work.session ? deps.sessions?.touch(work.session, {}, true) : undefined;
  if (!deps.calls) return work.run(caller.signal);
  const info = work.describe(session);
  return deps.calls.track(
    caller.person ? { ...info, person: caller.person } : info,
    caller.signal,
    (signal, queryId) => work.run(signal, queryId),
    (result) => work.summarize(result),
  );
}

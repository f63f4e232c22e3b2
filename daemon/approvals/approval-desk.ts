import type { PendingWrite, PersonAnswer, WaitHooks } from '../../shared/approval.js';
import { cliCommand } from '../../shared/cli-command.js';
import { HanactlError } from '../../shared/errors.js';
import type { ApprovalDecision, Param } from '../../shared/schemas.js';
import { paramText } from '../../shared/terminal-text.js';

/** Where the desk reports each write's state, for `hanactl queries` and the audit record. */
export interface ApprovalListener {
  waiting(queryId: string, pending: PendingWrite): void;
  decided(queryId: string, decision: ApprovalDecision): void;
}

interface Waiting {
  readonly pending: PendingWrite;
  readonly started: number;
  /** Ends the wait with this decision (the first one wins) and returns it. */
  settle(decision: Omit<ApprovalDecision, 'waitedMs'>): ApprovalDecision;
}

/**
 * The writes that wait for a person. A write waits until the first decision — `hanactl approve`,
 * `hanactl deny`, an answer in the editor — or its timeout, the caller's abort, or the daemon's
 * stop. Only an approval lets it run; every other end throws and the statement never runs.
 * No connection is held while a write waits, so reads on the same connection go on.
 */
export class ApprovalDesk {
  readonly #waiting = new Map<string, Waiting>();
  readonly #listener: ApprovalListener | undefined;
  /** How a person runs this installation's CLI, worked out once. */
  readonly #command: string;
  #stopped = false;

  constructor(listener?: ApprovalListener, command: string = cliCommand()) {
    this.#listener = listener;
    this.#command = command;
  }

  /** Waits for a decision on the write `queryId`; resolves when a person approved it, else throws. */
  async wait(
    write: { queryId: string; connection: string; sql: string; params?: readonly Param[] | undefined; timeoutSeconds: number },
    signal: AbortSignal | undefined,
    hooks: WaitHooks = {},
  ): Promise<ApprovalDecision> {
    if (this.#stopped) throw stoppedError(write.queryId);
    const started = Date.now();
    const { params, ...rest } = write;
    const pending: PendingWrite = {
      ...rest,
      // The values the statement runs with, shown beside it wherever a person decides on it.
      params: (params ?? []).map(paramText),
      expiresAt: new Date(started + write.timeoutSeconds * 1000),
      approveCommand: `${this.#command} approve ${write.queryId}`,
      denyCommand: `${this.#command} deny ${write.queryId}`,
    };
    const decided = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => settle({ decision: 'cancelled', by: null, who: null, reason: null });
    let settle!: (d: Omit<ApprovalDecision, 'waitedMs'>) => ApprovalDecision;
    let final: ApprovalDecision | undefined;
    const outcome = new Promise<ApprovalDecision>((resolve) => {
      settle = (d) => {
        if (final) return final;
        this.#waiting.delete(write.queryId);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const decision = { ...d, waitedMs: Date.now() - started };
        final = decision;
        this.#listener?.decided(write.queryId, decision);
        decided.abort();
        resolve(decision);
        return decision;
      };
    });
    this.#waiting.set(write.queryId, { pending, started, settle });
    this.#listener?.waiting(write.queryId, pending);
    timer = setTimeout(() => settle({ decision: 'expired', by: null, who: null, reason: null }), write.timeoutSeconds * 1000);
    timer.unref();
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    try {
      hooks.onWaiting?.(pending, (answer) => this.#answer(write.queryId, answer), decided.signal);
    } catch {
      // A second way of asking that fails leaves the terminal's.
    }
    const decision = await outcome;
    if (decision.decision === 'approved') return decision;
    throw endedError(pending, decision);
  }

  /** A person's decision on a waiting write; NOT_FOUND when none waits under that id. */
  decide(queryId: string, answer: PersonAnswer): { pending: PendingWrite; decision: ApprovalDecision } {
    const waiting = this.#waiting.get(queryId);
    if (!waiting) {
      throw new HanactlError(
        'NOT_FOUND',
        `No write with id ${JSON.stringify(queryId)} is waiting for approval (it may have been decided, expired or cancelled); \`${cliCommand('queries')}\` lists those that are.`,
      );
    }
    const decision = waiting.settle({
      decision: answer.approve ? 'approved' : 'denied',
      by: answer.by,
      who: answer.who,
      reason: answer.reason ?? null,
    });
    return { pending: waiting.pending, decision };
  }

  /** The writes waiting now. */
  list(): PendingWrite[] {
    return [...this.#waiting.values()].map((w) => w.pending);
  }

  /** The daemon stops: every waiting write ends unrun, and later ones are refused. */
  stopAll(): void {
    this.#stopped = true;
    for (const waiting of [...this.#waiting.values()]) waiting.settle({ decision: 'stopped', by: null, who: null, reason: null });
  }

  #answer(queryId: string, answer: PersonAnswer): void {
    if (this.#waiting.has(queryId)) this.decide(queryId, answer);
  }
}

function stoppedError(queryId: string): HanactlError {
  return new HanactlError(
    'SHUTTING_DOWN',
    `The daemon is stopping: the write ${queryId} did not run and no approval can be given now. Ask again once it runs.`,
  );
}

/** Why a write that waited did not run, in words the agent can pass on. */
function endedError(pending: PendingWrite, decision: ApprovalDecision): Error {
  const id = pending.queryId;
  switch (decision.decision) {
    case 'denied': {
      const who =
        decision.by === 'elicitation'
          ? `The MCP client (which calls itself "${decision.who ?? 'unknown'}") denied the write ${id}`
          : `A person denied the write ${id} in the terminal${decision.who ? ` (${decision.who})` : ''}`;
      const why = decision.reason ? ` Reason: ${decision.reason}` : '';
      return new HanactlError('WRITE_DENIED', `${who}; it did not run.${why} Do not retry it unchanged.`);
    }
    case 'expired':
      return new HanactlError(
        'APPROVAL_EXPIRED',
        `No person approved the write ${id} within ${pending.timeoutSeconds} s (\`${pending.approveCommand}\`); it did not run. Ask the person to watch for it, then try again.`,
      );
    case 'stopped':
      return new HanactlError('SHUTTING_DOWN', `The daemon was stopped while the write ${id} awaited a person's approval; it did not run.`);
    default:
      return new HanactlError('QUERY_CANCELLED', `The write ${id} was cancelled while it awaited approval; it did not run.`);
  }
}

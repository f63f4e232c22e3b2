/** What a write waiting for a person's approval looks like to the daemon and to the MCP tools. */

/** A write waiting for a person, as the tool and `hanactl queries` describe it. */
export interface PendingWrite {
  readonly queryId: string;
  readonly connection: string;
  readonly sql: string;
  /** The bound parameter values as a person sees them (`paramText`: quoted, escaped, long ones cut). */
  readonly params: readonly string[];
  readonly timeoutSeconds: number;
  readonly expiresAt: Date;
  /** The command that approves it, as a person types it. */
  readonly approveCommand: string;
  readonly denyCommand: string;
}

/** A person's answer: `cli` with the OS user, `elicitation` with the MCP client's name. */
export interface PersonAnswer {
  readonly approve: boolean;
  readonly by: 'cli' | 'elicitation';
  readonly who: string | null;
  readonly reason?: string | undefined;
}

/**
 * What the caller of `wait` learns while the write waits: `onWaiting` once, with `answer` for a
 * second way of asking (elicitation in the editor) and a signal that aborts once the write is
 * decided either way, so that question can be withdrawn.
 */
export interface WaitHooks {
  onWaiting?(pending: PendingWrite, answer: (answer: PersonAnswer) => void, decided: AbortSignal): void;
}

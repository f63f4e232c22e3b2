import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { PendingWrite, WaitHooks } from '../shared/approval.js';
import type { QueryResult } from '../shared/schemas.js';
import { ESCAPED_NOTE, visible } from '../shared/terminal-text.js';

/** The schema of the question asked in the editor: one yes/no. */
const APPROVE_FORM: {
  type: 'object';
  properties: Record<string, { type: 'boolean'; title: string; description: string }>;
  required: string[];
} = {
  type: 'object',
  properties: {
    approve: {
      type: 'boolean',
      title: 'Approve this write',
      description: 'Yes runs the statement; no refuses it and it never runs.',
    },
  },
  required: ['approve'],
};

/**
 * One tool call's side of a write that waits for a person: the progress text while it waits
 * (the query id, the command that approves it, the time left), and, where the client declared
 * form elicitation, the same question asked in the editor. The editor's answer and the
 * terminal's race; the first decides. A client without elicitation is asked nothing, and nothing
 * is approved for it. The editor's answer is the MCP client's word: hanactl cannot tell a person
 * clicking from a client program answering, so it is recorded as the client's, under the name the
 * client gave itself, and MCP over HTTP sessions (`inClient` false) are never asked.
 */
export class WriteApproval {
  readonly hooks: WaitHooks;
  #pending: PendingWrite | undefined;

  constructor(server: McpServer, requestId?: string | number, inClient = true) {
    this.hooks = {
      onWaiting: (pending, answer, decided) => {
        this.#pending = pending;
        decided.addEventListener('abort', () => (this.#pending = undefined), { once: true });
        const low = server.server;
        if (!inClient || !low.getClientCapabilities()?.elicitation?.form) return;
        const who = low.getClientVersion()?.name ?? 'the editor';
        low
          .elicitInput(
            { mode: 'form', message: question(pending), requestedSchema: APPROVE_FORM },
            {
              signal: decided,
              timeout: pending.timeoutSeconds * 1000,
              ...(requestId !== undefined ? { relatedRequestId: requestId } : {}),
            },
          )
          .then(
            (result) => {
              // Declined is a no; cancelled (dismissed) leaves the decision to the terminal.
              if (result.action === 'accept') answer({ approve: result.content?.approve === true, by: 'elicitation', who });
              else if (result.action === 'decline') answer({ approve: false, by: 'elicitation', who });
            },
            () => {},
          );
      },
    };
  }

  /** The progress text while the write waits, else undefined. */
  progress(): string | undefined {
    const p = this.#pending;
    if (!p) return undefined;
    const left = Math.max(0, Math.round((p.expiresAt.getTime() - Date.now()) / 1000));
    return awaiting(p, left);
  }
}

/** What the agent is told while a write waits: plainly, with the id, the command and the time left. */
export function awaiting(p: PendingWrite, leftSeconds: number): string {
  return `This write awaits a person's approval (query id ${p.queryId}) and has not run. A person approves it with \`${p.approveCommand}\` or refuses it with \`${p.denyCommand}\`; it waits ${leftSeconds} s more, then expires unrun.`;
}

/**
 * The question in the editor: the whole statement with its control and format characters shown as
 * escapes (a bidi override or a carriage return cannot reorder or hide part of it), then the
 * values bound to its parameters, each on a line of its own.
 */
export function question(p: PendingWrite): string {
  const params = p.params.map((value, i) => `\nparameter ${i + 1}: ${value}`).join('');
  const escaped = visible(p.sql, { lines: true }) !== p.sql ? `\n\n${ESCAPED_NOTE}` : '';
  return `An agent asks to run this write on "${visible(p.connection)}" (query id ${p.queryId}):\n\n${visible(p.sql, { lines: true })}\n${params}${escaped}\n\nApprove it? Without an answer within ${p.timeoutSeconds} s it expires and does not run.`;
}

/** The line a result of an approved write starts with. */
export function approvalNote(result: Pick<QueryResult, 'approval'>): string {
  const a = result.approval;
  if (!a) return '';
  const after = `after ${Math.round(a.waitedMs / 100) / 10} s; it ran.`;
  if (a.by === 'elicitation') return `This write was approved in the MCP client (which calls itself "${a.who ?? 'unknown'}") ${after}\n`;
  return `A person approved this write in the terminal${a.who ? ` (${a.who})` : ''} ${after}\n`;
}

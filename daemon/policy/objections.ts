import { capQuoted } from '../../shared/linear-text.js';
import type { Objection } from './types.js';

const WRITABLE = 'ask a person to mark this connection writable with hanactl (--allow-write)';

/** Builds a refusal; the message ends with the hint so it reads complete on its own. */
export function objection(rule: string, sentence: string, hint: string): Objection {
  return { ok: false, rule, message: `${sentence} ${hint}`, sentence, hint };
}

/** A refusal that only a read-only connection makes. `what` finishes "Refused: ...". */
export function readOnly(rule: string, what: string, instead = 'Run a SELECT instead'): Objection {
  return objection(rule, `Refused: ${what}, and this connection is read-only.`, `${instead}, or ${WRITABLE}.`);
}

/** Categories of leading keywords: what they do, and whether a writable connection refuses them too. */
export const CATEGORIES = {
  'write-statement': { does: 'changes data', always: false },
  ddl: { does: 'changes the schema or permissions', always: false },
  'admin-statement': { does: 'is a maintenance command that changes the database', always: false },
  'procedure-call': { does: 'runs code that can change data', always: false },
  'bulk-copy': { does: 'moves data in bulk, which run_query does not stream', always: false },
  'transaction-control': {
    does: 'controls the transaction',
    always: true,
    hint: 'Each call already runs in its own transaction; send the statement on its own.',
  },
  'session-change': {
    does: 'changes the session',
    always: true,
    hint: 'Session settings and context values are fixed by hanactl for every call; write schema-qualified names (schema.table) instead of changing the session.',
  },
  'host-access': {
    does: 'reaches files or programs on the database host',
    always: true,
    hint: 'Read the data with a SELECT instead; files and programs on the host are out of reach by design.',
  },
  'lock-statement': {
    does: 'takes or releases explicit locks',
    always: true,
    hint: 'Each call runs in its own transaction, so an explicit lock has no use; send the query or write on its own.',
  },
  'server-admin': {
    does: 'controls the server or other sessions',
    always: true,
    hint: 'Ask a person to do this outside hanactl.',
  },
} as const;

export type Category = keyof typeof CATEGORIES;

/**
 * The refusal for a statement of `category`; `label` is the keyword(s) as the agent wrote them
 * (which may quote a string literal: it is cut short).
 */
export function categoryObjection(category: Category, written: string): Objection {
  const entry = CATEGORIES[category];
  const label = capQuoted(written);
  if ('hint' in entry) {
    return objection(category, `Refused: ${label} ${entry.does}, which hanactl does not allow on any connection.`, entry.hint);
  }
  return readOnly(category, `${label} ${entry.does}`);
}

/**
 * The refusal for a statement that would fix a context value (`mcp.*`, PostgreSQL) outside
 * hanactl's own per-call setting: a function's SET clause, ALTER ROLE/DATABASE ... SET. Such a
 * value would be in force while hanactl's read-back sees its own value restored.
 */
export function contextSettingObjection(name: string): Objection {
  return objection(
    'session-change',
    `Refused: the statement sets ${name}, a context value, which only hanactl sets, for each call, on every connection.`,
    `Remove the SET clause for ${name} and send the statement again.`,
  );
}

/** The `mcp.` namespace of context values (PostgreSQL setting names, lower-cased). */
export const isContextSetting = (name: string): boolean => name.startsWith('mcp.');

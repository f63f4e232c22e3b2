import type { Category } from './objections.js';
import { isWord, leadIndex, topLevel } from './tokens.js';
import type { Token } from './types.js';

const by = (category: Category, words: string): [string, Category][] => words.split(' ').map((w) => [w, category]);

/** Leading keywords that are not reads, by category. Reads are listed per dialect. */
const LEADING: ReadonlyMap<string, Category> = new Map([
  ...by('write-statement', 'INSERT UPDATE DELETE MERGE UPSERT REPLACE'),
  ...by('ddl', 'CREATE ALTER DROP TRUNCATE RENAME GRANT REVOKE COMMENT SECURITY'),
  ...by(
    'admin-statement',
    'VACUUM ANALYZE ANALYSE REINDEX CLUSTER REFRESH CHECKPOINT OPTIMIZE REPAIR CHECK CHECKSUM NOTIFY PURGE BACKUP RECOVER LOAD UNLOAD CACHE',
  ),
  ...by('procedure-call', 'CALL DO EXECUTE EXEC'),
  ...by('bulk-copy', 'COPY'),
  ...by('transaction-control', 'BEGIN COMMIT ROLLBACK SAVEPOINT RELEASE END ABORT XA'),
  ...by('session-change', 'SET RESET USE UNSET DISCARD PREPARE DEALLOCATE DECLARE LISTEN UNLISTEN HANDLER DETACH CONNECT'),
  ...by('host-access', 'ATTACH IMPORT EXPORT'),
  ...by('lock-statement', 'LOCK UNLOCK'),
  ...by('server-admin', 'START SHUTDOWN KILL RESTART INSTALL UNINSTALL FLUSH'),
]);

/** What a statement's leading keyword makes it; `label` names it for the message. */
export interface LeadingKind {
  readonly category: Category;
  readonly label: string;
}

/** Forms whose category differs from their first word's. */
function refine(lead: string, tokens: readonly Token[], at: number): LeadingKind | undefined {
  const second = tokens[at + 1];
  const two = (category: Category): LeadingKind => ({ category, label: `${lead} ${second?.text ?? ''}`.trim() });
  switch (lead) {
    case 'SET':
    case 'START':
    case 'PREPARE':
      // SET TRANSACTION, SET SESSION CHARACTERISTICS AS TRANSACTION, START TRANSACTION, PREPARE TRANSACTION
      return tokens.slice(at + 1, at + 4).some((t) => isWord(t, 'TRANSACTION')) ? two('transaction-control') : undefined;
    case 'ALTER':
      if (isWord(second, 'SYSTEM')) return two('server-admin');
      return isWord(second, 'SESSION') ? two('session-change') : undefined;
    case 'IMPORT':
      return isWord(second, 'FOREIGN') ? two('ddl') : undefined;
    case 'LOAD':
      if (second?.kind === 'string') return { category: 'host-access', label: 'LOAD of a library' };
      return isWord(second, 'DATA', 'XML') ? two('host-access') : undefined;
    case 'VACUUM':
      return tokens.some((t) => isWord(t, 'INTO')) ? { category: 'host-access', label: 'VACUUM INTO' } : undefined;
    case 'COPY': {
      const top = topLevel(tokens);
      const file = top.some((t, k) => isWord(t, 'TO', 'FROM') && top[k + 1]?.kind === 'string');
      const program = top.some((t) => isWord(t, 'PROGRAM'));
      return file || program ? { category: 'host-access', label: `COPY with a ${program ? 'program' : 'file'}` } : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * Classifies a statement by its leading keyword(s), or `undefined` when it does not lead with a
 * known non-read keyword (reads, and words nobody listed).
 */
export function leadingKind(tokens: readonly Token[]): LeadingKind | undefined {
  const at = leadIndex(tokens);
  const lead = tokens[at];
  if (!isWord(lead)) return undefined;
  const refined = refine(lead.text, tokens, at);
  if (refined) return refined;
  const category = LEADING.get(lead.text);
  return category ? { category, label: lead.text } : undefined;
}

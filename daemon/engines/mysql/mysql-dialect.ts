import { mysqlCredentialObjection } from '../../policy/credential-reads.js';
import { type DialectPolicy, ident, type LexicalSyntax, PLAIN_SYNTAX, str } from '../../policy/dialects.js';
import { hostFileWords } from '../../policy/host-file-words.js';
import { mysqlDefaultValueObjection } from '../../policy/mysql-default-value.js';
import { mysqlSystemTableObjection } from '../../policy/mysql-system-tables.js';
import { objection } from '../../policy/objections.js';
import { mysqlStatusCountersRule } from '../../policy/status-counters.js';
import { isWord, keywordAt } from '../../policy/tokens.js';
import type { Objection, Token } from '../../policy/types.js';

/** MySQL `"..."` is a string unless ANSI_QUOTES; as a quoted name it is checked the stricter way. */
const mysql: LexicalSyntax = {
  ...PLAIN_SYNTAX,
  quotes: { "'": str(true), '"': ident('"', true), '`': ident('`') },
  dashCommentNeedsSpace: true,
  hashComments: true,
  executableComments: 'code',
  hexPrefixes: 'BX',
  mariadbTokens: true,
};

/**
 * `EXECUTE IMMEDIATE expr` (sql_yacc.yy) runs SQL text built when it runs, which no check of the
 * statement's text sees (`CONCAT('SELECT 1 INTO OUT', 'FILE ...')`): refused on every connection.
 */
function dynamicSqlObjection(tokens: readonly Token[]): Objection | undefined {
  const at = tokens.findIndex((_, k) => keywordAt(tokens, k) === 'EXECUTE' && isWord(tokens[k + 1], 'IMMEDIATE'));
  if (at < 0) return undefined;
  return objection(
    'dynamic-sql',
    'Refused: EXECUTE IMMEDIATE runs SQL text built when it runs, which the statement check cannot see; hanactl does not allow it on any connection.',
    'Send the statement itself in the call, with its values as query parameters.',
  );
}

/** What the statement policy knows about MySQL and MariaDB (their scanner: sql_lex.cc). */
export const MYSQL_DIALECT: DialectPolicy = {
  syntax: mysql,
  alternatives: [
    { ...mysql, quotes: { "'": str(), '"': ident('"'), '`': ident('`') } }, // NO_BACKSLASH_ESCAPES
    { ...mysql, quotes: { "'": str(true), '"': ident('"'), '`': ident('`') } }, // ANSI_QUOTES
  ],
  reads: ['SELECT', 'WITH', 'VALUES', 'TABLE', 'EXPLAIN', 'DESCRIBE', 'DESC', 'SHOW'],
  explainNamesTable: true,
  catalogRules: (tokens, allowWrite, database) =>
    dynamicSqlObjection(tokens) ??
    mysqlCredentialObjection(tokens, allowWrite, database) ??
    mysqlSystemTableObjection(tokens, database) ??
    (allowWrite ? undefined : mysqlDefaultValueObjection(tokens)),
  separatedRowsRules: mysqlStatusCountersRule,
  rawTextRule: hostFileWords,
  colonEqualsAssigns: true,
  codeReachesContext: true,
  doEvaluatesExpressions: true,
};

import { mysqlCredentialObjection } from '../../policy/credential-reads.js';
import { type DialectPolicy, ident, type LexicalSyntax, PLAIN_SYNTAX, str } from '../../policy/dialects.js';
import { hostFileWords } from '../../policy/host-file-words.js';
import { mysqlDefaultValueObjection } from '../../policy/mysql-default-value.js';
import { mysqlSystemTableObjection } from '../../policy/mysql-system-tables.js';
import { mysqlStatusCountersRule } from '../../policy/status-counters.js';

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
    mysqlCredentialObjection(tokens, allowWrite, database) ??
    mysqlSystemTableObjection(tokens, database) ??
    (allowWrite ? undefined : mysqlDefaultValueObjection(tokens)),
  separatedRowsRules: mysqlStatusCountersRule,
  rawTextRule: hostFileWords,
  colonEqualsAssigns: true,
  codeReachesContext: true,
  doEvaluatesExpressions: true,
};

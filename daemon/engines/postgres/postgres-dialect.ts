import { type DialectPolicy, ident, type LexicalSyntax, PLAIN_SYNTAX, str } from '../../policy/dialects.js';
import { postgresReferencedFunction } from '../../policy/function-references.js';
import { postgresSeparatedRowsRule } from '../../policy/named-relations.js';
import { postgresParserObjection } from '../../policy/parser-rules.js';
import { postgresTokenObjection } from '../../policy/pg-functions.js';
import { roleStateTokenRule } from '../../policy/role-state.js';

const postgres: LexicalSyntax = {
  ...PLAIN_SYNTAX,
  quotes: { "'": str(), '"': ident('"') },
  spaces: ' \t\n\r\f',
  lineCommentEnd: 'cr-or-lf',
  hexPrefixes: 'BX',
  nestedComments: true,
  dollarQuotes: true,
  escapePrefixes: true,
};

/** What the statement policy knows about PostgreSQL (its scanner: scan.l; its parser: libpg-query). */
export const POSTGRES_DIALECT: DialectPolicy = {
  syntax: postgres,
  alternatives: [{ ...postgres, quotes: { ...postgres.quotes, "'": str(true) } }],
  reads: ['SELECT', 'WITH', 'VALUES', 'TABLE', 'EXPLAIN', 'SHOW'],
  explainNamesTable: false,
  catalogRules: postgresTokenObjection,
  separatedRowsRules: postgresSeparatedRowsRule,
  roleStateRules: roleStateTokenRule,
  parserCheck: postgresParserObjection,
  colonEqualsAssigns: false,
  codeReachesContext: true,
  referencedFunctionRule: postgresReferencedFunction,
};

import { type DialectPolicy, ident, PLAIN_SYNTAX, str } from '../../policy/dialects.js';

/** What the statement policy knows about SAP HANA. */
export const HANA_DIALECT: DialectPolicy = {
  syntax: { ...PLAIN_SYNTAX, quotes: { "'": str(), '"': ident('"') }, lineCommentEnd: 'unknown' },
  alternatives: [],
  reads: ['SELECT', 'WITH', 'EXPLAIN'],
  explainNamesTable: false,
  // In SAP HANA `:=` only assigns a SQLScript block's local variable; session variables are `SET 'K'`.
  colonEqualsAssigns: false,
  sqlscriptBlocks: true,
  codeReachesContext: true,
};

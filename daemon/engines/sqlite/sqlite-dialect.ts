import { type DialectPolicy, ident, PLAIN_SYNTAX, str } from '../../policy/dialects.js';
import { pragmaTableObjection } from '../../policy/pragma.js';

/** What the statement policy knows about SQLite (its scanner: tokenize.c). */
export const SQLITE_DIALECT: DialectPolicy = {
  syntax: { ...PLAIN_SYNTAX, quotes: { "'": str(), '"': ident('"'), '`': ident('`'), '[': ident(']') }, tclVariables: true },
  alternatives: [],
  reads: ['SELECT', 'WITH', 'VALUES', 'EXPLAIN', 'PRAGMA'],
  explainNamesTable: false,
  colonEqualsAssigns: true,
  // Context values are mcp_context(), a function only the broker sets: no statement reaches them.
  codeReachesContext: false,
  // pragma_<name>(arg) runs PRAGMA name = arg: only the reporting pragmas are reads.
  catalogRules: (tokens, allowWrite) => pragmaTableObjection(tokens, allowWrite),
};

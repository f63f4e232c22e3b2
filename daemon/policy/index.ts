export { assertStatementAllowed, assertStatementChecked, type Checked, checkStatement } from './check-statement.js';
export { type Skeleton, type Statement, skeletonize } from './skeletonize.js';
export type { Objection, PolicyOptions, StatementReferences, Token, Verdict } from './types.js';

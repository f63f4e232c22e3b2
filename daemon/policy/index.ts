export { assertStatementAllowed, checkStatement } from './check-statement.js';
export { type Skeleton, type Statement, skeletonize } from './skeletonize.js';
export type { Objection, PolicyOptions, Token, Verdict } from './types.js';

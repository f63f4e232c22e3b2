import type { StatementResult } from './driver.js';

/**
 * Where a login could read credentials, asked of the server itself when a person registers or
 * tests a connection (`daemon/queries/privilege-advice.ts` runs it). An engine without such a
 * role model has none.
 */
export interface PrivilegeProbe {
  /** One read-only statement answering one row about the connection's own login. */
  readonly sql: string;
  /** Sentences for a person, naming the login as `user`; empty when the login reads no credentials. */
  advice(row: StatementResult['rows'][number], user: string): string[];
  /**
   * Asked too when the connection separates rows by context values: where the login itself is not
   * bound by what separates them (row-level security it bypasses). Its sentences name their own remedy.
   */
  readonly separation?: Omit<PrivilegeProbe, 'separation' | 'database'>;
  /**
   * Asked on every connection: what in the connection's database changes what ordinary SQL does
   * (a person's cast between built-in types). Its sentences name their own remedy.
   */
  readonly database?: Omit<PrivilegeProbe, 'separation' | 'database'>;
}

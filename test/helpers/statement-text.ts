import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import { textOf } from './mcp-client.js';

/**
 * Asserts that `result` (of `sql`) is the refusal of a read of other sessions' statement text,
 * and that `leak`, a secret in such a statement, is in it in no form: as is, hex (either case),
 * reversed, or base64.
 */
export function expectStatementTextRefused(result: CallToolResult, sql: string, leak: string): void {
  expect(result.isError, sql).toBe(true);
  expect(textOf(result), sql).toMatch(/^STATEMENT_REFUSED: Refused: .* shows the text of other sessions' statements, .*hanactl queries/s);
  const all = JSON.stringify(result);
  const hex = Buffer.from(leak).toString('hex');
  for (const form of [leak, hex, hex.toUpperCase(), [...leak].reverse().join(''), Buffer.from(leak).toString('base64').slice(0, 12)])
    expect(all, sql).not.toContain(form);
}

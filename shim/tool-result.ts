import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isHanactlError } from '../shared/errors.js';

/** A successful result: readable text plus the structured form. */
export function ok(text: string, structured?: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], ...(structured ? { structuredContent: structured } : {}) };
}

/** A failure the model can read and correct itself from (`isError`), never a protocol fault. */
export function fail(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/** Runs a tool body; any error becomes an `isError` result that says what to do next. */
export async function guarded(body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await body();
  } catch (err) {
    if (isHanactlError(err)) {
      const extra = err.details.sqlState ? ` (SQLSTATE ${err.details.sqlState})` : '';
      // The refusing rule is named so the agent can tell which rule to satisfy.
      const rule = err.details.rule ? ` (rule: ${err.details.rule})` : '';
      return fail(`${err.code}: ${err.message}${extra}${rule}`);
    }
    return fail(`INTERNAL: ${err instanceof Error ? err.message : String(err)}`);
  }
}

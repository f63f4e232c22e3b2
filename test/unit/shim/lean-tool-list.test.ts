import { describe, expect, it } from 'vitest';
import { leanToolList } from '../../../shim/lean-tool-list.js';

const DRAFT7 = 'http://json-schema.org/draft-07/schema#';

describe('the tools/list answer without the $schema keyword', () => {
  it('drops it from every input and output schema, keeping the rest of each tool', () => {
    const listed = {
      jsonrpc: '2.0' as const,
      id: 3,
      result: {
        tools: [
          {
            name: 'run_query',
            description: 'd',
            inputSchema: { $schema: DRAFT7, type: 'object', properties: { sql: { type: 'string' } }, required: ['sql'] },
            outputSchema: { $schema: DRAFT7, type: 'object', properties: { rows: { type: 'array' } } },
            annotations: { readOnlyHint: true },
          },
          { name: 'current_connection', inputSchema: { type: 'object' } },
        ],
        nextCursor: 'c',
      },
    };
    expect(leanToolList(listed)).toEqual({
      jsonrpc: '2.0',
      id: 3,
      result: {
        tools: [
          {
            name: 'run_query',
            description: 'd',
            inputSchema: { type: 'object', properties: { sql: { type: 'string' } }, required: ['sql'] },
            outputSchema: { type: 'object', properties: { rows: { type: 'array' } } },
            annotations: { readOnlyHint: true },
          },
          { name: 'current_connection', inputSchema: { type: 'object' } },
        ],
        nextCursor: 'c',
      },
    });
    expect(JSON.stringify(listed)).toContain('$schema'); // the original is not changed
  });

  it('passes every other message as it is, including rows that hold a $schema key', () => {
    const call = { jsonrpc: '2.0' as const, id: 4, result: { content: [], structuredContent: { rows: [{ $schema: 'x' }] } } };
    const request = { jsonrpc: '2.0' as const, id: 5, method: 'tools/list', params: {} };
    expect(leanToolList(call)).toBe(call);
    expect(leanToolList(request)).toBe(request);
  });
});

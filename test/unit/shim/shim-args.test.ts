import { describe, expect, it } from 'vitest';
import { parseShimArgs } from '../../../shim/args.js';

describe('the bundled shim’s options', () => {
  it('takes the same options as hanactl mcp, with or without the command word', () => {
    expect(parseShimArgs(['mcp', '--connection', 'shop', '--project', '/p'])).toEqual({ connection: 'shop', project: '/p' });
    expect(parseShimArgs(['--connection=shop', '--conn-file', 'c.json'])).toEqual({ connection: 'shop', connFile: 'c.json' });
    expect(parseShimArgs([])).toEqual({});
  });
});

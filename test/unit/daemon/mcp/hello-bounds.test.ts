import { describe, expect, it } from 'vitest';
import { parseHello } from '../../../../daemon/mcp/hello.js';

const hello = { hanactl: 'relay', v: 1, session: 'abcdef12-3456', pid: 4242, cwd: '/tmp' };

describe('the relay hello is bounded before it is parsed', () => {
  it('refuses a hello with more values than a message may hold, or nested too deep, naming the bound', () => {
    const context = Object.fromEntries(Array.from({ length: 20_000 }, (_, n) => [`K${n}`, 'v']));
    expect(() => parseHello(JSON.stringify({ ...hello, context }))).toThrow(/hello holds more than 10000 values/);
    const deep = `${JSON.stringify(hello).slice(0, -1)},"context":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`;
    expect(() => parseHello(deep)).toThrow(/hello nests arrays and objects more than 32 deep/);
  });

  it('reads an ordinary hello', () => {
    expect(parseHello(JSON.stringify({ ...hello, context: { TENANT: 'a' } })).context).toEqual({ TENANT: 'a' });
  });
});

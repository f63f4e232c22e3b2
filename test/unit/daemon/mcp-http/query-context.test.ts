import { describe, expect, it } from 'vitest';
import { contextFromClaims, contextFromQuery, parseRawQuery, rawQueryOf } from '../../../../daemon/mcp-http/query-context.js';

const shop = { name: 'shop', context: ['CUSTOMER_ID', 'REGION'], engine: 'postgres' as const };

describe('parseRawQuery', () => {
  it('keeps order and repeats, decodes percent and +, and reads a bare name as empty', () => {
    expect(parseRawQuery('A=1&b=x%20y+z&A=2&C&&D=')).toEqual([
      ['A', '1'],
      ['b', 'x y z'],
      ['A', '2'],
      ['C', ''],
      ['D', ''],
    ]);
    expect(parseRawQuery('')).toEqual([]);
    expect(parseRawQuery('V=a%3Db%26c')).toEqual([['V', 'a=b&c']]);
  });

  it('refuses a value without a name and broken percent-encoding', () => {
    expect(() => parseRawQuery('=5')).toThrow('The endpoint\'s query string has a value without a name ("=5").');
    expect(() => parseRawQuery('A=%E0%A4%A')).toThrow('The endpoint\'s query string is not valid percent-encoding near "%E0%A4%A".');
  });
});

describe('rawQueryOf', () => {
  it('is everything after the first ? and before a #, undecoded', () => {
    expect(rawQueryOf('http://h/mcp/x?A=1&A=%20#frag')).toBe('A=1&A=%20');
    expect(rawQueryOf('http://h/mcp/x')).toBe('');
  });
});

describe('contextFromQuery: the stdio rules, strictly, on the raw query string', () => {
  it('gives each declared name its value, names trimmed and upper-cased', () => {
    expect(contextFromQuery('customer_id=7&%20Region%20=north', shop)).toEqual({ CUSTOMER_ID: '7', REGION: 'north' });
  });

  it.each([
    [
      'an undeclared name',
      'CUSTOMER_ID=1&REGION=n&X=1',
      'The context parameter X is not declared for this connection; declared: CUSTOMER_ID, REGION.',
    ],
    ['any name where none is declared', 'X=1', 'The context parameter X is not declared for this connection; declared: none.'],
    ['a name twice', 'CUSTOMER_ID=1&CUSTOMER_ID=1&REGION=n', 'The context parameter CUSTOMER_ID is given more than once.'],
    ['a name twice, spelt two ways', 'REGION=a&CUSTOMER_ID=1&region=b', 'The context parameter REGION is given more than once.'],
    [
      'a declared name missing',
      'REGION=n',
      "The context parameter CUSTOMER_ID is declared for this connection but has no value; add CUSTOMER_ID=<value> to the endpoint's query string (/mcp/shop?CUSTOMER_ID=...).",
    ],
    [
      'a declared name empty',
      'CUSTOMER_ID=&REGION=n',
      'The context parameter CUSTOMER_ID is empty; an empty value is refused (an engine may store it as NULL).',
    ],
    [
      'a declared name bare',
      'CUSTOMER_ID&REGION=n',
      'The context parameter CUSTOMER_ID is empty; an empty value is refused (an engine may store it as NULL).',
    ],
    [
      'a value over the byte limit',
      `CUSTOMER_ID=${'x'.repeat(4097)}&REGION=n`,
      'The context parameter CUSTOMER_ID is 4097 bytes long; the limit on this engine is 4096 bytes (values are refused, never truncated).',
    ],
  ])('refuses %s, naming the parameter', (_what, query, sentence) => {
    const declared = query === 'X=1' ? { ...shop, context: [] } : shop;
    expect(() => contextFromQuery(query, declared)).toThrow(sentence);
    try {
      contextFromQuery(query, declared);
    } catch (err) {
      expect(err).toMatchObject({ code: 'CONTEXT_INVALID', status: 400 });
    }
  });

  it('counts the limit in UTF-8 bytes after decoding, per engine', () => {
    const hana = { ...shop, context: ['CUSTOMER_ID'], engine: 'hana' as const };
    expect(contextFromQuery(`CUSTOMER_ID=${encodeURIComponent('é'.repeat(2500))}`, hana).CUSTOMER_ID).toHaveLength(2500);
    expect(() => contextFromQuery(`CUSTOMER_ID=${encodeURIComponent('é'.repeat(2501))}`, hana)).toThrow(
      /5002 bytes long; the limit on this engine is 5000/,
    );
  });
});

describe('context values from claims', () => {
  const mapped = { ...shop, contextClaims: { CUSTOMER_ID: 'customer_id' } };
  const caller = (claims: Record<string, unknown>) => ({ subject: 'alice', claims });

  it("takes a mapped name's value from a string or number claim and the others from the URL", () => {
    expect(contextFromClaims(mapped, caller({ customer_id: 7 }))).toEqual({ CUSTOMER_ID: '7' });
    const fromClaims = contextFromClaims(mapped, caller({ customer_id: 'c-9' }));
    expect(contextFromQuery('REGION=eu', mapped, fromClaims)).toEqual({ CUSTOMER_ID: 'c-9', REGION: 'eu' });
  });

  it('refuses a missing or non-scalar claim (403), naming it', () => {
    for (const claims of [{}, { customer_id: null }, { customer_id: ['1', '2'] }, { customer_id: { id: 1 } }]) {
      expect(() => contextFromClaims(mapped, caller(claims))).toThrow(
        /^Your access token \(alice\) has no (string or number in its )?"customer_id" claim/,
      );
    }
  });

  it('refuses a URL value for a mapped name, whatever its value', () => {
    expect(() => contextFromQuery('customer_id=7&REGION=eu', mapped, { CUSTOMER_ID: '7' })).toThrow(
      'The context parameter CUSTOMER_ID of "shop" comes from your sign-in, not from the URL',
    );
  });

  it('ignores a mapping of a name the connection no longer declares', () => {
    expect(contextFromClaims({ ...shop, contextClaims: { TENANT: 'tid' } }, caller({}))).toEqual({});
  });
});

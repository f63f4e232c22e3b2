import { describe, expect, it } from 'vitest';
import { contextSqlName } from '../../../../daemon/engines/context-names.js';
import { assertContextKept, contextMismatches, contextNotKept } from '../../../../daemon/engines/context-unavailable.js';

describe('reading context values back before the statement', () => {
  const names = ['CUSTOMER_ID', 'REGION'];

  it('passes when every value reads back as set', () => {
    expect(contextMismatches(names, { CUSTOMER_ID: '7', REGION: 'EMEA' }, ['7', 'EMEA'])).toEqual([]);
  });

  it('names each value that reads back different, including one altered by a character set', () => {
    expect(contextMismatches(names, { CUSTOMER_ID: '7', REGION: 'Zürich' }, ['8', 'Z?rich'])).toEqual(['CUSTOMER_ID', 'REGION']);
  });

  it('treats a value that reads back missing as different', () => {
    expect(contextMismatches(names, { CUSTOMER_ID: '7', REGION: 'EMEA' }, ['7'])).toEqual(['REGION']);
  });

  it('wants a name this call does not set to read back empty', () => {
    expect(contextMismatches(names, { CUSTOMER_ID: '7' }, ['7', null])).toEqual([]);
    expect(contextMismatches(names, { CUSTOMER_ID: '7' }, ['7', ''])).toEqual([]);
    expect(contextMismatches(names, { CUSTOMER_ID: '7' }, ['7', 'EMEA'])).toEqual(['REGION']);
  });

  it('says which parameter, that the statement did not run, and what an operator should look at', () => {
    const err = contextNotKept('CUSTOMER_ID', 'set_config');
    expect(err.code).toBe('CONTEXT_UNAVAILABLE');
    expect(err.message).toMatch(
      /^The context parameter CUSTOMER_ID did not read back .* set_config, so the statement did not run; an operator/,
    );
  });

  it('stops the call at the first parameter that differs, and lets it run when none does', () => {
    expect(() => assertContextKept(names, { CUSTOMER_ID: '7', REGION: 'EMEA' }, ['7', 'EMEA'], 'set_config')).not.toThrow();
    expect(() => assertContextKept(names, { CUSTOMER_ID: '7', REGION: 'EMEA' }, ['8', 'APAC'], 'set_config')).toThrow(
      contextNotKept('CUSTOMER_ID', 'set_config').message,
    );
  });

  it('spells a name in SQL the same way for every engine: lower case, nothing but letters, digits and _', () => {
    expect(contextSqlName('CUSTOMER_ID')).toBe('customer_id');
    expect(contextSqlName("X'; DROP")).toBe('xdrop');
  });
});

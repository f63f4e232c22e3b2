import { describe, expect, it } from 'vitest';
import { RESOLVE_MARKER, resolveRefusal } from '../../../../../daemon/engines/postgres/postgres-resolve.js';

/** The refusal the daemon gives for the walk's finding `found`, as the server's error carries it. */
const refusal = (found: string) => resolveRefusal(`invalid input syntax for type integer: "${RESOLVE_MARKER}${found}"`);

describe('refusals of foreign tables and of utility statements in function bodies', () => {
  it('names a quoted server and wrapper as the catalog holds them', () => {
    const error = refusal('W r "odd ""srv""" my_fdw public.v reads ft');
    expect(error?.message).toContain('Refused: public.v reads the foreign table ft (server odd "srv", foreign-data wrapper my_fdw)');
    expect(error?.message).toContain('this connection is read-only');
    expect(error?.details?.rule).toBe('foreign-table');
  });

  it('says rows are separated where they are, and speaks of a table named directly as itself', () => {
    const error = refusal('W s loop file_fdw public.ft reads ft');
    expect(error?.message).toMatch(/^Refused: public\.ft is the foreign table ft \(server loop, foreign-data wrapper file_fdw\)/);
    expect(error?.message).toContain('rows are separated on this connection');
  });

  it('refuses COPY on every connection and ANALYZE on a read-only one, naming the function', () => {
    const copy = refusal('M copy v_report calls f_copy()');
    expect(copy?.message).toMatch(/^Refused: v_report calls f_copy\(\), whose body runs COPY as a statement of its own/);
    expect(copy?.message).toContain('on any connection');
    expect(copy?.details?.rule).toBe('host-access');
    const analyze = refusal('M analyze f_analyze() calls f_analyze()');
    expect(analyze?.message).toMatch(/^Refused: f_analyze\(\) runs ANALYZE as a statement of its own/);
    expect(analyze?.message).toContain('this connection is read-only');
  });
});

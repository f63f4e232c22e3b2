import { describe, expect, it } from 'vitest';
import { FURTHER_MARKER, resolveRefusal, resolveStep } from '../../../../../daemon/engines/postgres/postgres-resolve.js';

const all = { relations: ['"v"'], functions: ['f'], attributes: ['peek'], operators: ['###'], types: ['pk'] };

describe('resolveStep beyond relations and functions', () => {
  it('sends the first check for a statement that names only an operator, a type or a name after a dot', () => {
    for (const references of [
      { relations: [], functions: [], operators: ['###'] },
      { relations: [], functions: [], types: ['pk'] },
      { relations: [], functions: [], attributes: ['peek'] },
    ]) {
      expect(resolveStep(references, 'first')?.text).toContain(FURTHER_MARKER);
    }
  });

  it('binds each list once in the first check, and every list in the walk', () => {
    // After the relations, the policy's list of built-ins a policy may not call (bound, not written into the text).
    const first = resolveStep(all, 'first')?.values ?? [];
    expect([first[0], ...first.slice(2)]).toEqual(['{"\\"v\\""}', '{"f","peek"}', '{"###"}', '{"pk"}']);
    expect(first[1]).toContain('"pg_terminate_backend"');
    expect(resolveStep(all, 'walk')?.values?.slice(0, 5)).toEqual(['{"\\"v\\""}', '{"f"}', '{"peek"}', '{"###"}', '{"pk"}']);
  });

  it("sends the walk at once for hanactl's key table named by name", () => {
    expect(resolveStep({ relations: ['"hanactl"."context_keys"'], functions: [] }, 'first')?.text.startsWith('WITH RECURSIVE')).toBe(true);
  });

  it('sends the walk at once for a storage (TOAST) table named by name', () => {
    for (const name of ['"pg_toast"."pg_toast_2619"', '"pg_toast_temp_3"."pg_toast_16500"']) {
      expect(resolveStep({ relations: [name], functions: [] }, 'first')?.text.startsWith('WITH RECURSIVE'), name).toBe(true);
    }
  });

  it('names the relation a storage (TOAST) table serves', () => {
    const refusal = (found: string) => resolveRefusal(`invalid input syntax for type integer: "hanactl: refused reference ${found}"`);
    expect(refusal('E toast_view reads pg_toast_2619 of pg_statistic')).toMatchObject({
      message: expect.stringMatching(
        /^Refused: toast_view reads pg_toast_2619, which stores the out-of-line values of pg_statistic \(a TOAST table\)/,
      ),
      details: { rule: 'storage-table' },
    });
    expect(refusal('E pg_toast.pg_toast_2619 reads pg_toast_2619 of pg_statistic')?.message).toMatch(
      /^Refused: pg_toast\.pg_toast_2619 stores the out-of-line values of pg_statistic/,
    );
    expect(refusal('E f() reads pg_toast of ')?.message).toMatch(
      /^Refused: f\(\) reads pg_toast, which stores the out-of-line values of another relation/,
    );
  });

  it('says what each finding is, with its rule', () => {
    const refusal = (found: string) => resolveRefusal(`invalid input syntax for type integer: "hanactl: refused reference ${found}"`);
    expect(refusal('R v_fn reads pg_stat_activity')?.details).toMatchObject({ rule: 'credential-read' });
    expect(refusal('R keys_v reads context_keys')?.message).toMatch(/context signing keys/);
    expect(refusal('F ft reads ft')?.message).toMatch(/foreign table ft, whose remote end hanactl cannot judge/);
    expect(refusal('D peek() calls peek()')?.message).toMatch(/^Refused: peek\(\) is a SECURITY DEFINER function/);
    expect(refusal('D operator ### calls peek2()')?.message).toMatch(/^Refused: operator ### calls peek2\(\), a SECURITY DEFINER/);
    expect(resolveRefusal('some other failure')).toBeUndefined();
  });
});

describe('resolveStep where rows are separated', () => {
  it('asks the walk for the executor statistics only then', () => {
    expect(resolveStep({ ...all, separated: true }, 'walk')?.text).toContain("'S '");
    expect(resolveStep(all, 'walk')?.text).not.toContain("'S '");
  });

  it("names the statistics a person's view or function reaches, with their rule", () => {
    const refusal = resolveRefusal(
      'invalid input syntax for type integer: "hanactl: refused reference S "v_io" reads pg_stat_user_tables"',
    );
    expect(refusal?.details).toMatchObject({ rule: 'executor-statistics' });
    expect(refusal?.message).toMatch(
      /^Refused: "v_io" \(through pg_stat_user_tables, in the objects it uses\) reports the executor's statistics/,
    );
  });
});

describe('owner-rights relations where rows are separated', () => {
  const refusal = (found: string) => resolveRefusal(`invalid input syntax for type integer: "hanactl: refused reference ${found}"`);

  it('asks the walk and the view stage about them only then', () => {
    expect(resolveStep({ ...all, separated: true }, 'walk')?.text).toContain("'O '");
    expect(resolveStep(all, 'walk')?.text).not.toContain("'O '");
    expect(resolveStep({ ...all, separated: true }, 'view')?.text).toContain('security_invoker');
    expect(resolveStep(all, 'view')?.text).not.toContain('security_invoker');
  });

  it('names the view, the table and what a person can change, with its rule', () => {
    const view = refusal('O order_overview reads order_overview over orders as v');
    expect(view?.details).toMatchObject({ rule: 'owner-rights' });
    expect(view?.message).toMatch(
      /^Refused: order_overview is a view that reads orders, a table under row-level security, with its owner's rights/,
    );
    expect(view?.message).toMatch(/security_invoker = true/);
    expect(view?.message).toMatch(/ALTER TABLE orders FORCE ROW LEVEL SECURITY/);
    expect(refusal('O outer_v reads order_overview over orders as v')?.message).toMatch(
      /^Refused: outer_v reads order_overview: order_overview is a view/,
    );
    expect(view?.message).not.toMatch(/an owner a policy binds/);
    const policy = refusal('O forced_own reads forced_own over forced as p +owner_all');
    expect(policy?.details).toMatchObject({ rule: 'owner-rights' });
    expect(policy?.message).toMatch(/the policy owner_all of forced applies to that owner .* and not to the connection's role/);
    expect(policy?.message).toContain('ALTER VIEW forced_own SET (security_invoker = true)');
    expect(policy?.message).not.toMatch(/FORCE/);
    expect(refusal('O v2 reads narrow_own over narrow as p -not hidden')?.message).toMatch(
      /^Refused: v2 reads narrow_own: narrow_own is a view .* the restrictive policy not hidden of narrow limits the connection's role/,
    );
    expect(refusal('O totals reads totals over orders as m')?.message).toMatch(/^Refused: totals is a materialized view over orders/);
    expect(refusal('O archive reads archive over loopback as f')?.message).toMatch(
      /^Refused: archive is a foreign table \(server loopback\)/,
    );
  });

  it('names a table whose row security does not bind the login, why, and the remedy', () => {
    const owned = refusal('O orders reads orders over orders as bo');
    expect(owned?.details).toMatchObject({ rule: 'owner-rights' });
    expect(owned?.message).toMatch(/^Refused: orders is under row-level security, but the connection's login owns orders/);
    expect(owned?.message).toContain('ALTER TABLE orders FORCE ROW LEVEL SECURITY');
    expect(refusal('O mine reads orders over orders as bo')?.message).toMatch(
      /^Refused: mine reads orders: orders is under row-level security/,
    );
    const superuser = refusal('O orders reads orders over orders as bs')?.message;
    expect(superuser).toMatch(/login is a superuser, which row-level security does not bind/);
    expect(superuser).toMatch(/neither a superuser nor BYPASSRLS/);
    expect(superuser).not.toMatch(/FORCE/);
    expect(refusal('O orders reads orders over orders as by')?.message).toMatch(/login has BYPASSRLS/);
  });

  it('names a child read apart from its parent, and a parent without row security over a child with it', () => {
    const child = refusal('O inv_c2 reads inv_c2 over inv as c');
    expect(child?.message).toMatch(/^Refused: inv_c2 is a partition or inheritance child of inv/);
    expect(child?.message).toMatch(/Read inv instead/);
    expect(child?.message).toMatch(/REVOKE SELECT ON inv_c2/);
    const parent = refusal('O trips_view reads trips over trips_c1 as u');
    expect(parent?.details).toMatchObject({ rule: 'owner-rights' });
    expect(parent?.message).toMatch(
      /^Refused: trips_view reads trips: trips has no row-level security, but its partition or inheritance child trips_c1 has/,
    );
    expect(parent?.message).toContain('ALTER TABLE trips ENABLE ROW LEVEL SECURITY');
  });
});

describe('views and functions that filter by context values without a barrier, where rows are separated', () => {
  const refusal = (found: string) => resolveRefusal(`invalid input syntax for type integer: "hanactl: refused reference ${found}"`);

  it('asks the walk and the view stage about them only then', () => {
    expect(resolveStep({ ...all, separated: true }, 'walk')?.text).toContain("'V '");
    expect(resolveStep(all, 'walk')?.text).not.toContain("'V '");
    expect(resolveStep({ ...all, separated: true }, 'view')?.text).toContain('security_barrier');
    expect(resolveStep(all, 'view')?.text).not.toContain('security_barrier');
  });

  it('judges a view by its stored query, not by what its text calls', () => {
    for (const stage of ['view', 'walk'] as const) {
      const text = resolveStep({ ...all, separated: true }, stage)?.text ?? '';
      expect(text).toContain('FROMEXPR :fromlist');
      expect(text).toContain('hasDistinctOn true');
      expect(text).not.toContain('pg_get_viewdef');
    }
  });

  it('names the view and says how to set the barrier, with its rule', () => {
    const view = refusal('V my_accounts reads my_accounts');
    expect(view?.details).toMatchObject({ rule: 'context-barrier' });
    expect(view?.message).toMatch(/^Refused: my_accounts is a view that filters rows \(by a condition, a join, a sublink/);
    expect(view?.message).toContain('ALTER VIEW my_accounts SET (security_barrier = true)');
    expect(refusal('V outer_v reads my_accounts')?.message).toMatch(/^Refused: outer_v reads my_accounts: my_accounts is a view/);
    // A view whose name holds a space, found as the server quotes it.
    const spaced = refusal('V app."my accounts" reads app."my accounts"');
    expect(spaced?.details).toMatchObject({ rule: 'context-barrier' });
    expect(spaced?.message).toContain('ALTER VIEW app."my accounts" SET (security_barrier = true)');
  });

  it('names an inlinable function and how to keep it from being inlined', () => {
    const fn = refusal('V my_rows() calls my_rows()');
    expect(fn?.details).toMatchObject({ rule: 'context-barrier' });
    expect(fn?.message).toMatch(/^Refused: my_rows\(\) is a LANGUAGE sql set-returning function/);
    expect(fn?.message).toContain('security_barrier = true');
    expect(fn?.message).toContain('ALTER FUNCTION my_rows VOLATILE');
    expect(refusal('V v_rows calls my_rows()')?.message).toMatch(/^Refused: v_rows calls my_rows\(\): my_rows\(\) is/);
    // Named by the statement unqualified, found qualified (off the search path).
    const qualified = refusal('V my_rows() calls app.my_rows()')?.message;
    expect(qualified).toMatch(/^Refused: app\.my_rows\(\) is a LANGUAGE sql/);
    expect(qualified).toContain('ALTER FUNCTION app.my_rows VOLATILE');
  });
});

describe('functions that set cpu_operator_cost, where rows are separated', () => {
  it('asks the walk for them only then', () => {
    expect(resolveStep({ ...all, separated: true }, 'walk')?.text).toContain("'P clause '");
    expect(resolveStep(all, 'walk')?.text).not.toContain("'P clause '");
  });

  it('names the function and where it sets the value', () => {
    const refusal = (found: string) => resolveRefusal(`invalid input syntax for type integer: "hanactl: refused reference ${found}"`);
    const clause = refusal('P clause f() calls f()');
    expect(clause?.message).toMatch(/^Refused: f\(\) sets cpu_operator_cost when it runs \(a SET clause in its definition\)/);
    expect(clause?.message).toContain('before the row-security policy');
    expect(clause?.details).toMatchObject({ rule: 'session-change' });
    expect(refusal('P body v_orders calls g()')?.message).toMatch(
      /^Refused: v_orders calls g\(\), which sets or resets cpu_operator_cost in its body/,
    );
  });
});

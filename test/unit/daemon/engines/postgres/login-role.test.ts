import { describe, expect, it } from 'vitest';
import type { ExecuteOptions } from '../../../../../daemon/engines/driver.js';
import { planCall, planOpening, ROLE_CHANGED_MARKER, ROLE_MARKER } from '../../../../../daemon/engines/postgres/postgres-call.js';

const options = (separated: boolean, readOnly = true): ExecuteOptions => ({
  timeoutMs: 1000,
  maxRows: 10,
  readOnly,
  ...(separated ? { separated: true } : {}),
  context: { CUSTOMER_ID: '1' },
});

/**
 * Where rows are separated, a call runs as the login whatever role default its session started
 * with: the role is set back to the login's inside the call's transaction, checked against the
 * login before the statement, and checked again with the context read-back.
 */
describe('planCall: the role a call runs as where rows are separated', () => {
  it('sets the role back to the login in the transaction, before the settings step checks it', () => {
    for (const readOnly of [true, false]) {
      const plan = planCall('SELECT 1', [], options(true, readOnly), 7, false, false, 'first', false, 'agent');
      const texts = plan.steps.map((step) => step.text);
      const begin = texts.findIndex((text) => text.startsWith('BEGIN'));
      expect(texts.slice(begin + 1, plan.settings)).toEqual([
        'SET LOCAL SESSION AUTHORIZATION DEFAULT',
        'SET LOCAL ROLE NONE',
        'SET LOCAL row_security = on',
      ]);
      const settings = plan.steps[plan.settings];
      expect(settings?.text).toContain(ROLE_MARKER);
      expect(settings?.text).toMatch(
        /CURRENT_USER OPERATOR\(pg_catalog\.=\) SESSION_USER AND SESSION_USER OPERATOR\(pg_catalog\.=\) \$3::pg_catalog\.name/,
      );
      expect(settings?.values?.at(-1)).toBe('agent');
      expect(plan.steps[plan.readBack]?.text).toContain(ROLE_CHANGED_MARKER);
    }
  });

  it('numbers the login after the signatures when values are signed', () => {
    const plan = planCall('SELECT 1', [], { ...options(true), contextKey: Buffer.alloc(32, 1) }, 7, false, false, 'first', false, 'agent');
    const settings = plan.steps[plan.settings];
    expect(settings?.values).toHaveLength(4);
    expect(settings?.values?.[3]).toBe('agent');
    expect(settings?.text).toContain('$4::pg_catalog.name');
  });

  it('opens a pooled signing call as the login too', () => {
    expect(planOpening(options(true)).map((step) => step.text)).toContain('SET LOCAL ROLE NONE');
  });

  it('leaves the role alone where rows are not separated', () => {
    const plan = planCall('SELECT 1', [], options(false), 7, false, false, 'first', false, 'agent');
    // Only the clean-up after the transaction touches it (RESET ROLE).
    expect(plan.steps.slice(0, plan.end).some((step) => step.text.includes('ROLE'))).toBe(false);
    expect(plan.steps[plan.settings]?.text).not.toContain(ROLE_MARKER);
  });
});

/**
 * Where rows are separated the statement (and its EXPLAIN) is planned with cpu_operator_cost = 0,
 * so no condition of the caller's runs before the row-security policy; hanactl's own resolve
 * step is planned before that, with the server's costs.
 */
describe('planCall: the policy runs first where rows are separated', () => {
  const COST_ZERO = "set_config('cpu_operator_cost', '0', true)";
  const withReferences = (separated: boolean): ExecuteOptions => ({
    ...options(separated),
    costGuard: { maxCost: 1000, over: () => new Error('over'), unavailable: () => new Error('unavailable') },
    references: { relations: [], functions: ['tenant_label'] },
  });

  it('sets it in the settings step when there is no resolve step', () => {
    const plan = planCall('SELECT 1', [], options(true), 7, false, false, 'first', false, 'agent');
    expect(plan.resolve).toBe(-1);
    expect(plan.steps[plan.settings]?.text).toContain(COST_ZERO);
  });

  it('sets it after the resolve step, before the EXPLAIN and the statement', () => {
    const plan = planCall('SELECT 1', [], withReferences(true), 7, false, false, 'first', false, 'agent');
    expect(plan.resolve).toBeGreaterThan(plan.settings);
    const at = plan.steps.findIndex((step) => step.text.includes(COST_ZERO));
    expect(at).toBe(plan.resolve + 1);
    expect(plan.explain).toBeGreaterThan(at);
    expect(plan.statement).toBeGreaterThan(at);
    expect(plan.steps.filter((step) => step.text.includes(COST_ZERO))).toHaveLength(1);
  });

  it('leaves the costs alone where rows are not separated', () => {
    for (const o of [options(false), withReferences(false)]) {
      const plan = planCall('SELECT 1', [], o, 7, false, false, 'first', false, 'agent');
      expect(plan.steps.some((step) => step.text.includes('cpu_operator_cost'))).toBe(false);
    }
  });
});

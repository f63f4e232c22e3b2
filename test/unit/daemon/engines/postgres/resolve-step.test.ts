import { describe, expect, it } from 'vitest';
import { planCall } from '../../../../../daemon/engines/postgres/postgres-call.js';
import { FURTHER_MARKER, nextStage, resolveStep } from '../../../../../daemon/engines/postgres/postgres-resolve.js';

const walks = (text: string | undefined) => text?.startsWith('WITH RECURSIVE') === true;

describe('resolveStep', () => {
  it('sends nothing for a statement that names nothing', () => {
    expect(resolveStep(undefined, 'first')).toBeUndefined();
    expect(resolveStep({ relations: [], functions: [] }, 'walk')).toBeUndefined();
  });

  it('sends the first check for ordinary names, each list bound once', () => {
    const step = resolveStep({ relations: ['"public"."orders"'], functions: ['count'] }, 'first');
    expect(walks(step?.text)).toBe(false);
    expect(step?.text).toContain(FURTHER_MARKER);
    expect(step?.values?.[0]).toBe('{"\\"public\\".\\"orders\\""}');
    expect(step?.values?.at(-1)).toBe('{"count"}');
    expect(resolveStep({ relations: [], functions: ['count'] }, 'first')?.values).toEqual(['{"count"}']);
  });

  it("binds the policy's name lists as parameters, each once, rather than writing them into the text", () => {
    for (const stage of ['first', 'view'] as const) {
      for (const separated of [false, true]) {
        const step = resolveStep({ relations: ['"v"'], functions: [], separated }, stage);
        expect(step?.text).not.toMatch(/'pg_terminate_backend'|[{,]pg_terminate_backend[,}]/);
        expect(step?.text).not.toMatch(/[{,']pg_authid[,}']/);
        const lists = (step?.values ?? []).filter((value) => value?.includes('"pg_terminate_backend"'));
        expect(lists.length).toBeGreaterThan(0);
        expect(new Set(step?.values).size).toBe(step?.values?.length);
        // Every bound value is used, and no parameter goes unbound.
        const used = new Set([...(step?.text.matchAll(/\$(\d+)/g) ?? [])].map((m) => Number(m[1])));
        expect([...used].sort((a, b) => a - b)).toEqual((step?.values ?? []).map((_, i) => i + 1));
      }
    }
  });

  it('binds the built-ins the walk refuses as one parameter rather than writing them into the text', () => {
    for (const separated of [false, true]) {
      const step = resolveStep({ relations: ['"v"'], functions: ['f'], separated }, 'walk');
      expect(step?.text).not.toMatch(/'pg_terminate_backend'/);
      expect(step?.values?.[7]).toContain('"pg_terminate_backend"');
      const used = new Set([...(step?.text.matchAll(/\$(\d+)/g) ?? [])].map((m) => Number(m[1])));
      expect([...used].sort((a, b) => a - b)).toEqual((step?.values ?? []).map((_, i) => i + 1));
    }
  });

  it('sends the walk when asked, and at once for a relation named as one the policy refuses', () => {
    expect(walks(resolveStep({ relations: ['"orders"'], functions: [] }, 'walk')?.text)).toBe(true);
    expect(walks(resolveStep({ relations: ['"orders"', '"ext"."pg_stat_statements"'], functions: [] }, 'first')?.text)).toBe(true);
    // Only the exact name as the server holds it: a quoted name in another case is another relation.
    expect(walks(resolveStep({ relations: ['"PG_STAT_STATEMENTS"'], functions: [] }, 'first')?.text)).toBe(false);
  });

  it('looks into a view at the view stage, but not into one the statement writes', () => {
    const view = resolveStep({ relations: ['"v"'], functions: [] }, 'view')?.text;
    expect(view).toContain('pg_rewrite');
    expect(resolveStep({ relations: ['"v"'], functions: [] }, 'first')?.text).not.toContain('pg_rewrite');
    const written = { relations: ['"v"'], functions: [], written: ['"v"'] };
    expect(resolveStep(written, 'view')?.text).toBe(resolveStep(written, 'first')?.text);
  });

  it('goes from the first check to the view stage only where that stage looks into views', () => {
    expect(nextStage('first', { relations: ['"v"'], functions: [] })).toBe('view');
    expect(nextStage('view', { relations: ['"v"'], functions: [] })).toBe('walk');
    expect(nextStage('first', { relations: [], functions: [], operators: ['='] })).toBe('walk');
    expect(nextStage('first', { relations: ['"v"'], functions: [], written: ['"v"'] })).toBe('walk');
  });
});

describe('planCall: the resolve step before anything plans the statement', () => {
  it("puts the resolve step before the cost guard's EXPLAIN, which comes before the statement (the planner runs functions it folds or estimates)", () => {
    const guard = { maxCost: 1000, over: () => new Error('over'), unavailable: () => new Error('unavailable') };
    const plan = planCall('SELECT tenant_label(1)', [], {
      timeoutMs: 1000,
      maxRows: 10,
      readOnly: true,
      costGuard: guard,
      references: { relations: [], functions: ['tenant_label'] },
    });
    expect(plan.resolve).toBeGreaterThan(plan.settings);
    expect(plan.explain).toBeGreaterThan(plan.resolve);
    expect(plan.statement).toBeGreaterThan(plan.explain);
    expect(plan.steps[plan.explain]?.text).toBe('EXPLAIN SELECT tenant_label(1)');
    // No step before the resolve step holds the statement's text.
    expect(plan.steps.slice(0, plan.resolve + 1).some((step) => step.text.includes('tenant_label(1)'))).toBe(false);
  });
});

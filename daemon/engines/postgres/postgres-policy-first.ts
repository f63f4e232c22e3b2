import { HanactlError } from '../../../shared/errors.js';
import { BODY_WORDS, TEXT_LANGUAGE } from './postgres-reach.js';

/**
 * Where rows are separated, the call is planned with cpu_operator_cost = 0 (POLICY_FIRST,
 * postgres-call.ts), so that no caller condition runs before a row-security policy on a scan. A
 * function sets its own value for what it runs, and that undoes it for the queries in its body:
 * a SET clause in its definition (pg_proc.proconfig: `SET cpu_operator_cost = 0.0025`, a person's
 * or an extension's), or a statement of its body that sets or resets it (`SET [LOCAL]
 * cpu_operator_cost`, `RESET cpu_operator_cost`, `RESET ALL`, `set_config('cpu_operator_cost',
 * ...)`, `UPDATE pg_settings`). With the server's costs a condition such as `CASE WHEN note ^@ v
 * THEN (SELECT true LIMIT -1) ELSE true END` runs on the rows the policy hides and fails on one.
 *
 * The body is judged by its words (BODY_WORDS: names folded, quoted names as written, strings
 * split into words too), coarsely, as the executor-statistics rule reads a body: the word
 * cpu_operator_cost anywhere, `reset` beside `all`, or `pg_settings` beside `update`. set_config
 * is refused in any body already (refusedBuiltinFinding), EXECUTE and DO too (runtimeCodeFinding).
 * The bodies are picked first (`OFFSET 0` keeps the pick apart): only those that hold one of the
 * words are split into words, whatever order the planner gives the conditions.
 */
export function policyFirstFinding(): string {
  const word = (w: string): string =>
    `EXISTS (SELECT FROM pg_catalog.unnest(${BODY_WORDS}) AS x(w) WHERE pg_catalog.lower(x.w) OPERATOR(pg_catalog.=) '${w}')`;
  return `COALESCE(
  (SELECT pg_catalog.concat('P clause ', r.root, ' calls ', p.proname, '()')
     FROM reach r JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) r.oid
    WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND p.proconfig IS NOT NULL
      AND EXISTS (SELECT FROM pg_catalog.unnest(p.proconfig) AS g(setting)
                   WHERE pg_catalog.lower(pg_catalog.split_part(g.setting, '=', 1)) OPERATOR(pg_catalog.=) 'cpu_operator_cost')
    LIMIT 1),
  (SELECT pg_catalog.concat('P body ', p.root, ' calls ', p.proname, '()')
     FROM (SELECT r.root, p.proname, p.prosrc
             FROM reach r JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) r.oid
            WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND ${TEXT_LANGUAGE} AND p.prosqlbody IS NULL
              AND p.prosrc OPERATOR(pg_catalog.~*) '(cpu_operator_cost|reset|pg_settings)'
           OFFSET 0) AS p
    WHERE CASE WHEN ${word('cpu_operator_cost')} OR (${word('reset')} AND ${word('all')}) OR (${word('pg_settings')} AND ${word('update')})
               THEN true ELSE false END
    LIMIT 1))`;
}

/** The refusal for `what`, a policy-first finding after its letter: `clause|body <root> calls <name>()`. */
export function policyFirstRefusal(what: string): HanactlError | undefined {
  const found = /^(clause|body) (.*) calls ([^ ]+)$/s.exec(what);
  if (!found) return undefined;
  const [, where, root, target] = found as unknown as [string, string, string, string];
  const how =
    where === 'clause'
      ? 'sets cpu_operator_cost when it runs (a SET clause in its definition)'
      : 'sets or resets cpu_operator_cost in its body (SET, RESET, RESET ALL, set_config or UPDATE pg_settings)';
  const through = root === target ? `${target} ${how}` : `${root} calls ${target}, which ${how}`;
  return new HanactlError(
    'STATEMENT_REFUSED',
    `Refused: ${through}, so the queries it runs are planned with other costs than the call's, where a condition may run before the row-security policy, on the rows it hides, and tell them apart; this connection's rows are separated by context values.`,
    {
      rule: 'session-change',
      hint: 'Write the statement the function would run directly, or ask a person to remove the setting from the function.',
    },
  );
}

import { hanactlCommand } from '../../shared/cli-command.js';
import { HanactlError } from '../../shared/errors.js';
import type { CostGuard } from '../engines/driver.js';
import type { ConnectionRecord } from '../registry/connection-record.js';

const shown = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(2));

/** The guard a read on this connection runs under, or undefined when a person set no limit. */
export function costGuardOf(record: ConnectionRecord): CostGuard | undefined {
  const maxCost = record.maxCost;
  if (maxCost === undefined) return undefined;
  return {
    maxCost,
    over: (estimate) =>
      new HanactlError(
        'STATEMENT_REFUSED',
        `Refused by the cost guard: the planner estimates this statement at cost ${shown(estimate)}, over the limit of ${shown(maxCost)} set for "${record.name}". It was not run. Narrow it: a WHERE on an indexed column, a LIMIT, or fewer joined rows (explain_query shows the plan). A person can raise the limit with \`${hanactlCommand()} set ${record.name} --max-cost <n>\`.`,
        { rule: 'max-cost', hint: 'Add a WHERE or a LIMIT, or use an index, so the plan is cheaper.' },
      ),
    unavailable: (reason) =>
      new HanactlError(
        'STATEMENT_REFUSED',
        `Refused by the cost guard: "${record.name}" has a cost limit of ${shown(maxCost)}, but ${reason} A person can clear the limit with \`${hanactlCommand()} set ${record.name} --no-max-cost\`.`,
        { rule: 'max-cost-unavailable' },
      ),
  };
}

/**
 * Why a connection that separates rows by context values keeps no cost limit: the planner's
 * estimate counts the rows the separation hides, and run-or-refused, one bit per call, is enough to
 * search another caller's values (a cross join scales an estimate over any limit).
 */
export function costGuardWithContext(name: string): string {
  return `"${name}" also declares context names, and the cost guard's answer (run or refused) depends on the planner's estimate, which counts the rows context values hide, so it could reveal another caller's values.`;
}

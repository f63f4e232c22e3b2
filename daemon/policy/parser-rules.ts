import { deniedFunctionName } from './denied-functions.js';
import { sqlArgumentObjection } from './embedded-sql.js';
import { categoryObjection, objection } from './objections.js';
import { deniedRelationObjection, namedRelationObjection, pgFunctionObjection, sqlArgumentPositions } from './pg-functions.js';
import { parsePostgres } from './pg-parser.js';
import type { Objection, PolicyOptions, Verdict } from './types.js';

const DISAGREE_HINT = 'Write the statement plainly, without unusual quoting or comments, and send it again.';

/**
 * The second, independent check on PostgreSQL: the text as PostgreSQL's own parser reads it.
 * Runs after the token rules passed (`kind` is their answer). Refuses when the parser sees other
 * statement boundaries or a non-read where the token rules saw a read, and runs every function
 * call anywhere in the tree through the same function rules; SQL text handed to a function is
 * checked whole by `embedded`. Text the grammar rejects is left to the server, which rejects it
 * the same way. Never throws.
 */
export function postgresParserObjection(
  sql: string,
  options: PolicyOptions,
  kind: 'read' | 'write',
  embedded: (sql: string) => Verdict,
): Objection | undefined {
  const parsed = parsePostgres(sql);
  if (!parsed.ok) {
    if (/memory exhausted|stack depth/i.test(parsed.message)) {
      return objection(
        'too-complex',
        "Refused: the statement is too complex to check (PostgreSQL's parser ran out of room).",
        'Split it into simpler statements and send each on its own.',
      );
    }
    // Text the grammar rejects is rejected by the server too (its parser is the same, version 15+);
    // the token rules alone vouch for it, and the server answers with its own syntax error.
    return undefined;
  }
  const [statement, ...more] = parsed.statements;
  if (!statement || more.length > 0) {
    return objection(
      'checks-disagree',
      `Refused: PostgreSQL's parser reads ${parsed.statements.length} statements in the text where the first check reads one; text the two checks read differently is not run.`,
      DISAGREE_HINT,
    );
  }
  for (const relation of parsed.relations) {
    const denied = deniedRelationObjection(relation);
    if (denied) return denied;
  }
  for (const call of parsed.calls) {
    if (call.name === 'set_config') return categoryObjection('session-change', 'set_config()');
    const denied = deniedFunctionName(call.name, options.allowWrite) ?? pgFunctionObjection(call.name, options.allowWrite);
    if (denied) return denied;
    for (const position of sqlArgumentPositions(call.name, call.argCount) ?? []) {
      const refused = sqlArgumentObjection(call.name, call.stringArgs[position], call.numberArgs[position] === true, embedded);
      if (refused) return refused;
    }
    const named = namedRelationObjection(call.name, call.argCount, (position) => call.stringArgs[position]);
    if (named) return named;
  }
  if (kind === 'read' && !statement.read) {
    return objection(
      'checks-disagree',
      `Refused: the first check reads a read here, but PostgreSQL's parser reads a ${statement.kind} that is not one; text the two checks read differently is not run.`,
      DISAGREE_HINT,
    );
  }
  return undefined;
}

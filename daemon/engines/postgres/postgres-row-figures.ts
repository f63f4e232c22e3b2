import { HanactlError } from '../../../shared/errors.js';
import { CATALOG_FIGURES_HINT, catalogFiguresObjection } from '../../policy/planner-figures.js';
import { FIRST_NORMAL_OID } from './postgres-reach.js';

/**
 * Where rows are separated: figures a relation keeps that count rows the caller cannot see, found
 * by the walk (postgres-reach.ts) wherever the statement reaches them. A sequence read as a relation
 * (`SELECT last_value FROM orders_id_seq`): its last value moves with every caller's inserts (its
 * function pg_sequence_last_value and the view pg_sequences are in the executor's statistics). A
 * view created since initdb whose rules read pg_class's figure columns (reltuples, relpages,
 * relallvisible: attribute numbers 10 to 12 in a rule that reads pg_class, OID 1259; a rule that
 * reads pg_class and another relation's 10th to 12th column is refused too): the figure of one
 * partition, or of an index over some rows, is one caller's row count. The statement's own reads of
 * pg_class are judged by the parser check (planner-figures.ts). currval and lastval report this
 * session's own nextval, and nextval what an INSERT's RETURNING shows: not refused; nor the
 * sequence a written table's default calls nextval on (the walk reaches it from the default), unless
 * the statement names it.
 */

const G = 'pg_catalog';

/** True when the rewrite rule `w` (pg_rewrite) reads pg_class's figure columns (its stored tree, as text). */
export function readsClassFigures(w: string): string {
  return `(${w}.ev_action::${G}.text OPERATOR(${G}.~) ':relid 1259 ' AND ${w}.ev_action::${G}.text OPERATOR(${G}.~) ':varattno 1[012] ')`;
}

/** What the walk found of such figures, as `N <root> reads <relation>` (a sequence, or pg_class through a view), or NULL. */
export function rowFiguresFinding(): string {
  return `COALESCE(
  (SELECT ${G}.concat('N ', r.root, ' reads ', c.relname)
     FROM reach r JOIN ${G}.pg_class c ON c.oid OPERATOR(${G}.=) r.oid
    WHERE r.kind OPERATOR(${G}.=) 'r' AND c.relkind OPERATOR(${G}.=) 'S'
      AND (r.root OPERATOR(${G}.=) c.oid::${G}.regclass::${G}.text
           OR NOT EXISTS (SELECT FROM reach q JOIN ${G}.pg_attrdef a ON a.adrelid OPERATOR(${G}.=) q.oid
                            JOIN ${G}.pg_depend d ON d.classid OPERATOR(${G}.=) '${G}.pg_attrdef'::${G}.regclass AND d.objid OPERATOR(${G}.=) a.oid
                           WHERE q.root OPERATOR(${G}.=) r.root AND q.kind OPERATOR(${G}.=) 'w' AND d.refobjid OPERATOR(${G}.=) c.oid))
    LIMIT 1),
  (SELECT ${G}.concat('N ', r.root, ' reads pg_class')
     FROM reach r JOIN ${G}.pg_rewrite w ON w.ev_class OPERATOR(${G}.=) r.oid
    WHERE r.kind OPERATOR(${G}.=) 'r' AND r.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID} AND ${readsClassFigures('w')}
    LIMIT 1))`;
}

/** The refusal for a finding `N <root> reads <relation>` (what follows the kind), or undefined when it is not one. */
export function rowFiguresRefusal(what: string): HanactlError | undefined {
  const found = /^(.*) reads (.+)$/s.exec(what);
  if (!found) return undefined;
  const [, root, relation] = found as unknown as [string, string, string];
  if (relation === 'pg_class') {
    const refusal = catalogFiguresObjection(`${root} (through the objects it uses)`);
    return new HanactlError('STATEMENT_REFUSED', refusal.message, { rule: refusal.rule, hint: CATALOG_FIGURES_HINT });
  }
  const through =
    root === relation || root.endsWith(`.${relation}`) || root.endsWith(`."${relation}"`) ? '' : `${root} reads ${relation}: `;
  return new HanactlError(
    'STATEMENT_REFUSED',
    `Refused: ${through}${relation} is a sequence: its last value moves with every caller's inserts, and on this connection it counts the rows that context values hide from you. currval() and lastval() report this session's own values.`,
    {
      rule: 'executor-statistics',
      hint: 'Count the rows you can see with SELECT count(*) instead; a person can read the sequence in a database client.',
    },
  );
}

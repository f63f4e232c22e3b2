import { HanactlError } from '../../../shared/errors.js';
import { PG_NAMES_RELATION } from '../../policy/pg-functions.generated.js';
import { CATALOG_FIGURES_HINT, catalogFiguresObjection } from '../../policy/planner-figures.js';
import { BODY_WORDS, FIRST_NORMAL_OID, STORED_TREES, TEXT_LANGUAGE } from './postgres-reach.js';

/**
 * Where rows are separated: figures a relation keeps that count rows the caller cannot see, found
 * by the walk (postgres-reach.ts) wherever the statement reaches them. A sequence read as a relation
 * (`SELECT last_value FROM orders_id_seq`): its last value moves with every caller's inserts (its
 * function pg_sequence_last_value and the view pg_sequences are in the executor's statistics).
 * pg_class's figure columns (reltuples, relpages, relallvisible) read by a person's code: the figure
 * of one partition, or of an index over some rows, is one caller's row count. The same rule at every
 * level the walk reaches: in the stored trees of objects created since initdb (a view's rules, a
 * BEGIN ATOMIC body, a policy, a default argument, a domain's CHECK, what a write fires), a tree
 * that reads pg_class (`:relid 1259`) and an attribute 10 to 12 or a whole row (attribute 0;
 * coarse: another relation's in the same tree counts too), or that hands pg_class as a regclass
 * constant to a function that reads a relation whole by name (table_to_xml and its family); and a
 * SQL or PL/pgSQL text body that names pg_class at all, as a word or a name the walk reads
 * (BODY_WORDS: `U&"pg_\0063lass"` too; coarse: the text is not parsed, so a whole-row read cannot
 * be told apart from a read of names). The statement's own reads of pg_class
 * are judged by the parser check (planner-figures.ts, named-relations.ts). currval and lastval
 * report this session's own nextval, and nextval what an INSERT's RETURNING shows: not refused; nor
 * the sequence a written table's default calls nextval on (the walk reaches it from the default),
 * unless the statement names it.
 */

const G = 'pg_catalog';

/** The functions that read a relation whole by its name (table_to_xml and its family), quoted for an IN list. */
const READS_BY_NAME = Object.keys(PG_NAMES_RELATION)
  .map((name) => `'${name}'`)
  .join(', ');

/**
 * True when the stored tree `tree` (an expression of type text) reads pg_class's figure columns
 * or its whole row, or names pg_class (OID 1259: bytes 235 4, printed as signed chars) as a
 * regclass constant and calls a function that reads a relation whole by name.
 */
export function readsClassFigures(tree: string): string {
  return `((${tree} OPERATOR(${G}.~) ':relid 1259 ' AND ${tree} OPERATOR(${G}.~) ':varattno (0|1[012]) ')
     OR (${tree} OPERATOR(${G}.~) ':consttype 2205 [^{}]*:constvalue 4 \\[ -21 4 0 0 '
         AND EXISTS (SELECT FROM ${G}.pg_proc f WHERE f.proname OPERATOR(${G}.=) ANY (ARRAY[${READS_BY_NAME}]::${G}.name[])
                      AND ${G}.strpos(${tree}, ${G}.concat(':funcid ', f.oid, ' ')) OPERATOR(${G}.>) 0)))`;
}

/** What the walk found of such figures, as `N <root> reads <relation>` (a sequence, or pg_class through a person's code), or NULL. */
export function rowFiguresFinding(): string {
  return `COALESCE(
  (SELECT ${G}.concat('N ', r.root, ' reads ', c.relname)
     FROM reach r JOIN ${G}.pg_class c ON c.oid OPERATOR(${G}.=) r.oid
    WHERE r.kind OPERATOR(${G}.=) 'r' AND c.relkind OPERATOR(${G}.=) 'S'
      AND (r.root OPERATOR(${G}.=) ${G}.textin(${G}.regclassout(c.oid::${G}.regclass))
           OR NOT EXISTS (SELECT FROM reach q JOIN ${G}.pg_attrdef a ON a.adrelid OPERATOR(${G}.=) q.oid
                            JOIN ${G}.pg_depend d ON d.classid OPERATOR(${G}.=) '${G}.pg_attrdef'::${G}.regclass AND d.objid OPERATOR(${G}.=) a.oid
                           WHERE q.root OPERATOR(${G}.=) r.root AND q.kind OPERATOR(${G}.=) 'w' AND d.refobjid OPERATOR(${G}.=) c.oid))
    LIMIT 1),
  (SELECT ${G}.concat('N ', r.root, ' reads pg_class')
     FROM reach r CROSS JOIN LATERAL (${STORED_TREES}) AS t
    WHERE r.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID} AND ${readsClassFigures('t.tree')}
    LIMIT 1),
  (SELECT ${G}.concat('N ', r.root, ' reads pg_class')
     FROM reach r JOIN ${G}.pg_proc p ON p.oid OPERATOR(${G}.=) r.oid
    WHERE r.kind OPERATOR(${G}.=) 'p' AND p.oid OPERATOR(${G}.>=) ${FIRST_NORMAL_OID} AND ${TEXT_LANGUAGE} AND p.prosqlbody IS NULL
      AND p.prosrc OPERATOR(${G}.~*) 'pg_class|u&[''"]'
      AND EXISTS (SELECT FROM ${G}.unnest(${BODY_WORDS}) AS x(w) WHERE ${G}.lower(x.w) OPERATOR(${G}.=) 'pg_class')
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

import { SEQUENCE_WRITE_NAMES } from '../../policy/denied-functions.js';
import { TRANSACTION_ID_SOURCES } from '../../policy/executor-statistics.js';
import { functionReferenceObjection, postgresReferencedFunction } from '../../policy/function-references.js';
import * as generated from '../../policy/pg-functions.generated.js';
import { PG_EXECUTOR_STATISTICS, PG_EXECUTOR_STATISTICS_VIEWS } from '../../policy/pg-functions.generated.js';
import { PG_HANACTL_SECRET_RELATIONS, PG_REFUSED_RELATION_NAMES, PG_STORAGE_NAME } from '../../policy/pg-functions.js';
import type { Objection, StatementReferences } from '../../policy/types.js';
import { unicodeEscapes, unreadableUnicode } from './postgres-unicode-names.js';

/**
 * What a statement reaches, as the server itself recorded it: the graph the resolve step walks
 * (postgres-resolve.ts) and sample_rows' check (postgres-reads.ts) share.
 *
 * From what the statement names (relations, functions, operators, types, casts, attribute
 * notation), the walk follows every object created since initdb (FIRST_NORMAL_OID) to what it
 * uses when it runs:
 * - a relation: what its rewrite rules use, from pg_depend (relations, functions, operators and
 *   types, wherever in the rule: :relid, :funcid, :opfuncid, :aggfnoid, :winfnoid, casts); its
 *   inheritance and partition children (pg_inherits); the types of its columns. pg_depend
 *   records nothing on the catalogs initdb pins (pg_authid, pg_user_mapping, pg_statistic), so
 *   the relations a rule reads are also taken from its stored tree (`:relid`, and a regclass constant
 *   handed to table_to_xml or its family: namedByConstant); and, when it has
 *   row-level security on, what its policies' USING and WITH CHECK expressions use (pg_depend
 *   from pg_policy, the relations of their stored trees, and the built-ins those call by OID),
 *   which the server runs on every read and write of it unnamed;
 * - a function, in any language: what pg_depend records for it (a BEGIN ATOMIC body's relations
 *   and functions, its argument and result types: a domain argument's CHECK runs on the call), and the relations its BEGIN ATOMIC body reads (`:relid`, as for rules); an
 *   aggregate's support functions (pg_aggregate); and, for a body written as
 *   SQL or PL/pgSQL text, each relation, function and type created since initdb whose name the
 *   text holds as a word, and what it may reach without a word (TEXT_BODY_UNNAMED: operators by
 *   symbol, casts, domains) (a text body is not parsed; SQL text it runs, EXECUTE or DO, is refused by
 *   runtimeCodeFinding rather than followed); for a function in language `internal`, the built-in
 *   its body names;
 * - an operator: its function, its planner estimators, its negator and commutator (pg_operator:
 *   left out of pg_depend, yet the planner swaps the negator in for NOT and an estimator calls the
 *   commutator), and every operator family it belongs to (kind f: all its pg_amop operators and
 *   pg_amproc functions, which a merge join, a sort USING it or a hash join calls unnamed);
 * - what the server keeps beside a relation it reads (relationDefinitions): the functions,
 *   operators, types and operator classes (kind c, then its family) that its partition key (and,
 *   for a partition, its ancestors' keys: kind k), its indexes' expressions, predicates and
 *   classes, its constraints and its statistics objects use (pg_depend), which the planner and
 *   the relation cache evaluate or fold for a statement naming only the relation;
 * - a type: its input, output, send, receive, modifier, analyse and subscript functions, a
 *   domain's base type and CHECK constraints (pg_constraint, through pg_depend), its element and
 *   row types, a range's canonical and difference functions, subtype and subtype class, a
 *   multirange's range (pg_range), every operator family with a class or member for it
 *   (comparisons a sort, DISTINCT or join makes unnamed),
 *   every cast to it and every cast from it, explicit ones too (pg_cast): the server's own code
 *   looks a cast up for a type made since initdb that the statement never names (to_json,
 *   to_jsonb, row_to_json, json_agg, json_build_object and the rest of their family call a
 *   type's explicit cast to json for each value, to_jsonb and jsonb_agg too, at any depth: a
 *   domain's base type, an array's element, a composite's fields; json.c and jsonb.c,
 *   json_categorize_type), and an extension may look one up as well: so every cast of a type the
 *   walk follows is, whoever looks it up. A cast between two types the statement names is followed
 *   as well.
 * - a relation's indexes of an operator class made since initdb (or of a family that was, or
 *   gained a member since): the class's support functions and operators, which an index scan
 *   calls for a statement naming only the table and built-in operators (indexClasses);
 * - on every walk, what the server may call for any statement without its name (IMPLICIT_ROOTS):
 *   a cast between built-in types through a function made since initdb, a default btree or hash
 *   operator class made since for a built-in type, a member added since to a built-in family,
 *   an operator made since that a built-in operator names as its negator or commutator.
 * - a relation the statement writes (INSERT, UPDATE, DELETE, MERGE, COPY ... FROM): all a read
 *   of it follows, and what a write to it fires, from the server's records of its own rows:
 *   what its triggers (row, statement, constraint; their functions and WHEN clauses), defaults
 *   and generated columns (pg_attrdef), constraints (pg_constraint) and index expressions use
 *   (pg_depend); written too, its partitions and children, the relations its rules name (an
 *   INSTEAD or ALSO action's table, a view's base table) and the tables its foreign keys'
 *   CASCADE / SET NULL / SET DEFAULT actions write to (where rows are separated, refused instead:
 *   reachCte). The functions a writing call reaches may write too: a relation their bodies name
 *   is followed as written when the body holds a write.
 * Objects initdb created are not followed: the policy judges them by name. A built-in function
 * reached from a person's object (an operator's, an aggregate's support function, a domain CHECK,
 * a default argument) is kept, unfollowed, so the findings judge it as they judge one the
 * statement calls (pg_cancel_backend behind an operator, pg_stat_reset in a domain's CHECK).
 */

/**
 * The relation whose storage (TOAST) table has the OID `toast` (pg_class.reltoastrelid), as
 * regclass text, or '' (the finding names it; pg_toast_<OID> names it only by number).
 */
const TOAST_OWNER = (toast: string): string =>
  `COALESCE((SELECT pg_catalog.textin(pg_catalog.regclassout(o.oid)) FROM pg_catalog.pg_class o WHERE o.reltoastrelid OPERATOR(pg_catalog.=) ${toast} LIMIT 1), '')`;

/** PostgreSQL's FirstNormalObjectId: every object initdb creates has a lower OID. */
export const FIRST_NORMAL_OID = 16384;

const quoted = (names: readonly string[]): string => names.map((n) => `'${n}'`).join(', ');

/** Relations whose rows hanactl never returns: the server's (PG_REFUSED_RELATION_NAMES), then hanactl's own key table. */
const REFUSED = quoted(PG_REFUSED_RELATION_NAMES);
const SECRETS = quoted(PG_HANACTL_SECRET_RELATIONS);

/** `items` as a PostgreSQL array literal, for a bound parameter. */
export function textArray(items: readonly string[] | undefined): string {
  return `{${(items ?? []).map((item) => `"${item.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`;
}

/** The bound values of a walk's parameters ($1..$5), in the order reachCte numbers them; $6 is the caller's, $7 writtenValue, $8 refusedBuiltinNames. */
export function reachValues(references: StatementReferences): string[] {
  return [
    textArray(references.relations),
    textArray(references.functions),
    textArray(references.attributes),
    textArray(references.operators),
    textArray(references.types),
  ];
}

/** The bound value of a walk's $7: the relations the statement writes. */
export function writtenValue(references: StatementReferences): string {
  return textArray(references.written);
}

const KIND_OF_CLASS = `CASE ${[
  ['pg_class', 'r'],
  ['pg_proc', 'p'],
  ['pg_operator', 'o'],
  ['pg_type', 't'],
  ['pg_opclass', 'c'],
  ['pg_opfamily', 'f'],
]
  .map(([catalog, kind]) => `WHEN d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.${catalog}'::pg_catalog.regclass THEN '${kind}'`)
  .join('\n         ')} END`;

/** The catalogs whose objects are code the server runs (functions, operators, types, operator classes and families), as pg_depend's refclassid. */
const CODE_CLASSES = `(ARRAY['pg_catalog.pg_proc'::pg_catalog.regclass, 'pg_catalog.pg_operator'::pg_catalog.regclass, 'pg_catalog.pg_type'::pg_catalog.regclass,
          'pg_catalog.pg_opclass'::pg_catalog.regclass, 'pg_catalog.pg_opfamily'::pg_catalog.regclass]::pg_catalog.oid[])`;

/**
 * What the server keeps beside relation `rel` (an OID expression) and evaluates when it plans or
 * reads it, as pg_depend's dependent (classid, oid): the relation's own row (a partition key's
 * expressions and operator classes, recorded on the table), its indexes (expressions, predicates,
 * operator classes: the relation cache folds the constant parts of expressions and predicates, an
 * index scan calls the class's support functions), its constraints (a CHECK constraint exclusion
 * folds and evaluates) and its extended statistics objects (expressions the planner folds). Each
 * found by an index on its table.
 */
export function relationDefinitions(rel: string): string {
  return `SELECT 'pg_catalog.pg_class'::pg_catalog.regclass AS classid, ${rel} AS oid
          UNION ALL SELECT 'pg_catalog.pg_class'::pg_catalog.regclass, rdx.indexrelid FROM pg_catalog.pg_index rdx WHERE rdx.indrelid OPERATOR(pg_catalog.=) ${rel}
          UNION ALL SELECT 'pg_catalog.pg_constraint'::pg_catalog.regclass, rdk.oid FROM pg_catalog.pg_constraint rdk WHERE rdk.conrelid OPERATOR(pg_catalog.=) ${rel}
          UNION ALL SELECT 'pg_catalog.pg_statistic_ext'::pg_catalog.regclass, rds.oid FROM pg_catalog.pg_statistic_ext rds WHERE rds.stxrelid OPERATOR(pg_catalog.=) ${rel}`;
}

/**
 * True when what the server keeps beside relation `a` (pg_class; relationDefinitions) uses code
 * made since initdb, or `a` is a partition whose parent's key does (or is itself a partition): a
 * read of `a` may then run it unnamed. Asked by the first check and the view stage, by index.
 */
export function personDefinitions(a: string): string {
  return `(EXISTS (SELECT FROM (${relationDefinitions(`${a}.oid`)}) AS pdo JOIN pg_catalog.pg_depend pdd
                  ON pdd.classid OPERATOR(pg_catalog.=) pdo.classid AND pdd.objid OPERATOR(pg_catalog.=) pdo.oid
                 WHERE pdd.refclassid OPERATOR(pg_catalog.=) ANY ${CODE_CLASSES} AND pdd.refobjid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} OFFSET 0)
          OR (${a}.relispartition AND EXISTS (SELECT FROM pg_catalog.pg_inherits pdi JOIN pg_catalog.pg_class pdc ON pdc.oid OPERATOR(pg_catalog.=) pdi.inhparent
                 WHERE pdi.inhrelid OPERATOR(pg_catalog.=) ${a}.oid
                   AND (pdc.relispartition OR EXISTS (SELECT FROM pg_catalog.pg_depend pdp
                         WHERE pdp.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass AND pdp.objid OPERATOR(pg_catalog.=) pdc.oid
                           AND pdp.refclassid OPERATOR(pg_catalog.=) ANY ${CODE_CLASSES} AND pdp.refobjid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID})))))`;
}

/** The languages whose bodies are text the walk reads for names. */
export const TEXT_LANGUAGE = `p.prolang OPERATOR(pg_catalog.=) ANY (SELECT l.oid FROM pg_catalog.pg_language l WHERE l.lanname OPERATOR(pg_catalog.=) ANY ('{sql,plpgsql}'::pg_catalog.name[]))`;

/**
 * A function in language `internal` (its body names one of the server's own C functions): a person
 * can point one at any built-in, so the walk follows it to the built-in of that body, which the
 * findings then judge by name as one the statement calls (pg_cancel_backend under another name).
 */
const INTERNAL_LANGUAGE = `p.prolang OPERATOR(pg_catalog.=) ANY (SELECT l.oid FROM pg_catalog.pg_language l WHERE l.lanname OPERATOR(pg_catalog.=) 'internal')`;

/**
 * The call may write (its transaction is not read-only: a statement that writes, a CALL, a
 * locking read on a writable connection), so the functions it reaches may write too (a
 * trigger's function, a default's, a procedure's): a relation a function's body names is then
 * followed as written when the body holds a write (a text body: one of WRITE_WORDS' words; a
 * BEGIN ATOMIC body: a statement whose commandType is UPDATE, INSERT, DELETE or MERGE), since
 * what a write to it fires runs too. A read runs in a read-only transaction, where no function
 * writes a table (the utility commands such a transaction still lets a body run are
 * postgres-utility-bodies.ts's).
 */
export const WRITE_WORDS = `'\\m(insert|update|delete|merge|truncate)\\M'`;

/** A SQL string literal of `text` (standard_conforming_strings, as the walk is sent). */
const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/** A character PostgreSQL's scanner takes into a name: ASCII letters, `_` and every character past ASCII. */
const NAME_START = String.raw`A-Za-z_\x80-\U0010ffff`;

/**
 * What parts a text body into words: a run of characters no unquoted name holds. The scanner's
 * ident_start and ident_cont (scan.l) take every character past ASCII into a name, which
 * `[:alnum:]` does not (pg_proc's text columns sort as "C", where it is ASCII only).
 */
const NOT_NAME = literal(`[^${NAME_START}0-9$]+`);

/**
 * A double-quoted name holding a character no unquoted name holds (`"role list"`, `"a-b"`): the
 * words of a split cannot give it, so the body is tokenised for it.
 */
const ODD_QUOTED_NAME = literal(`"[^"]*[^${NAME_START}0-9$"]`);

/**
 * A word `w` of a text body (an SQL expression), as written and as the server may read it
 * unquoted: downcase_identifier (scansup.c) folds A-Z only in a multibyte encoding such as UTF8
 * (`Größe` is `größe`, `ÖL` is `Öl`), which lower() does not match under a collation that folds
 * more; in a single-byte encoding it folds the other letters as the database's LC_CTYPE does,
 * which lower() under the database's own collation does. Both foldings are taken (more names,
 * never fewer), each kept in the "C" collation the body has.
 */
function folded(w: string): string {
  return `SELECT ${w} UNION SELECT pg_catalog.translate(${w}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') COLLATE pg_catalog."C"
           UNION SELECT pg_catalog.lower(${w} COLLATE pg_catalog."default") COLLATE pg_catalog."C"`;
}

/**
 * The tokens of a SQL or PL/pgSQL text body as PostgreSQL's scanner (which PL/pgSQL's uses) reads
 * them, each match one token, left to right: a line comment, a block comment, an E'' string
 * (backslash escapes), a '' string, a quoted name, a name or keyword, white space, any other
 * character. Where two alternatives start at one place the longest is taken (an alternation is
 * greedy), so E'...' is one string and not the name E. What this cannot read as the server does is
 * caught by UNREADABLE_TOKEN and DOLLAR_QUOTE, and the body is then judged on its raw text.
 */
export const TOKEN = literal(
  String.raw`--[^\n\r]*|/\*(?:[^*]|\*+[^*/])*\*+/|[Ee]'(?:[^'\\]|\\.|'')*'|'(?:[^']|'')*'|"(?:[^"]|"")*"|[${NAME_START}][${NAME_START}0-9$]*|\s+|.`,
);

/**
 * A token whose reading depends on what TOKEN cannot know: a comment holding `/*` (the server
 * nests comments, so the real one ends later), a plain string holding a backslash (read with
 * escapes when standard_conforming_strings is off, so it may end elsewhere).
 */
export const UNREADABLE_TOKEN = `(t.m[1] OPERATOR(pg_catalog.~~) '/*%' AND pg_catalog.strpos(pg_catalog.substr(t.m[1], 3), '/*') OPERATOR(pg_catalog.>) 0)
                  OR (t.m[1] OPERATOR(pg_catalog.~~) '''%' AND pg_catalog.strpos(t.m[1], '\\') OPERATOR(pg_catalog.>) 0)`;

/** A dollar quote's delimiter anywhere in the body (`$$`, `$tag$`; a name holding `$` counts too): TOKEN does not read them. */
export const DOLLAR_QUOTE = literal(String.raw`\$(?:[${NAME_START}][${NAME_START}0-9]*)?\$`);

/**
 * The names a function's text body may hold: its words (NOT_NAME: `stat_zurücksetzen`, `報告` are
 * one word each), as written and folded as the server folds an unquoted name (folded: `Größe` is
 * `größe`; a quoted name of one word among them), each quoted name as the server reads it (TOKEN: `"role list"`, `"a-b"`,
 * `""` for `"`), which no split into words yields, and each Unicode-escaped name or string as the
 * server decodes it (`U&"pg_\0061uthid"`, `U&"!0069nvoices" UESCAPE '!'`, `U&'public.\0069nvoices'`:
 * unicodeEscapes), whole and as words, folded too. More than the body names (a word in a
 * comment or a string counts too), never less; what unicodeEscapes cannot read is refused instead
 * (UNREADABLE_NAMES). The body is tokenised only when a double quote encloses a character that is
 * not one of a word's, or it holds `U&"` or `U&'`.
 */
export const BODY_WORDS = `ARRAY(SELECT v.w FROM pg_catalog.regexp_split_to_table(p.prosrc, ${NOT_NAME}) AS x(w) CROSS JOIN LATERAL (${folded('x.w')}) AS v(w)
        UNION SELECT pg_catalog.replace(pg_catalog.substr(u.q, 2, GREATEST(pg_catalog.length(u.q) OPERATOR(pg_catalog.-) 2, 0)), '""', '"')
                FROM (SELECT t.m[1] AS q, pg_catalog.lag(t.m[1]) OVER (ORDER BY t.n) AS amp, pg_catalog.lag(t.m[1], 2) OVER (ORDER BY t.n) AS prefix
                        FROM pg_catalog.regexp_matches(p.prosrc, ${TOKEN}, 'g') WITH ORDINALITY AS t(m, n)
                       WHERE p.prosrc OPERATOR(pg_catalog.~) ${ODD_QUOTED_NAME}) AS u
               WHERE u.q OPERATOR(pg_catalog.~~) '"%' AND NOT (u.amp OPERATOR(pg_catalog.=) '&' AND pg_catalog.lower(u.prefix) OPERATOR(pg_catalog.=) 'u')
        UNION SELECT w FROM (${unicodeEscapes('p.prosrc', TOKEN)}) AS u
                CROSS JOIN LATERAL (SELECT u.text UNION SELECT v.w FROM pg_catalog.regexp_split_to_table(u.text, ${NOT_NAME}) AS s(w)
                                                         CROSS JOIN LATERAL (${folded('s.w')}) AS v(w)) AS x(w)
               WHERE u.text IS NOT NULL)`;

/**
 * True when a SQL or PL/pgSQL text body (pg_proc p) writes a Unicode-escaped name or string whose
 * reading the walk cannot be sure of (unreadableUnicode: an escape given in a form not read, one
 * that decodes to no character, a body TOKEN may misread): its names are then unknown, and the
 * function is refused as one whose code cannot be read (runtimeCodeFinding).
 */
export const UNREADABLE_NAMES = unreadableUnicode('p.prosrc', TOKEN, DOLLAR_QUOTE, UNREADABLE_TOKEN);

/**
 * The operators a keyword form calls without its symbol in the text: `IN`, `CASE x WHEN`,
 * `NULLIF`, `IS DISTINCT FROM`, `BETWEEN`, `GREATEST`/`LEAST`, `LIKE`, `ILIKE`, `SIMILAR TO`.
 */
const KEYWORD_OPERATORS = `'{=,<>,<,>,<=,>=,~~,~~*,!~~,!~~*,~,!~}'::pg_catalog.name[]`;

/**
 * The built-in types a text can name other than by their type name (`integer` is int4, `double
 * precision` float8, `character varying` varchar, `timestamp with time zone` timestamptz, ...), by
 * the OIDs initdb fixes (pg_type.dat): an explicit cast to one is taken as named wherever it occurs.
 */
const ALIASED_TYPES = `'{16,20,21,23,700,701,1042,1043,1083,1114,1184,1266,1560,1562,1700}'::pg_catalog.oid[]`;

/**
 * What a SQL or PL/pgSQL text body (pg_proc p, not BEGIN ATOMIC, whose dependencies pg_depend
 * records) may reach that its words cannot map, as (kind, oid): every operator made since initdb
 * whose symbol occurs in the text (`'x' ==> 'y'`, `OPERATOR(s.==>)`) or that a keyword form calls
 * unnamed (KEYWORD_OPERATORS); every cast made since initdb through a function that the server
 * may pick unasked (implicit or assignment) or whose target type the text names (an explicit cast
 * names its target: `::text`, `CAST(x AS text)`, `text(x)`; ALIASED_TYPES); each type made since initdb the text names as a
 * word (a cast to a domain, a variable of it: its CHECK runs), and every domain whose name is not
 * one word (`"audited text"`), which the words cannot match. A domain the body reaches unnamed
 * comes through what it names: a relation's column types, a function's argument and result
 * types, a composite type's fields. An over-approximation: a database holds few of each, and a
 * text body is read only when the walk reaches it.
 */
const TEXT_BODY_UNNAMED = `SELECT 'o' COLLATE pg_catalog."C" AS kind, o.oid FROM pg_catalog.pg_operator o
         WHERE o.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}
           AND (pg_catalog.strpos(p.prosrc, o.oprname::pg_catalog.text) OPERATOR(pg_catalog.>) 0
                OR pg_catalog.array_position(${KEYWORD_OPERATORS}, o.oprname) IS NOT NULL)
        UNION ALL SELECT 'p', k.castfunc FROM pg_catalog.pg_cast k JOIN pg_catalog.pg_type kt ON kt.oid OPERATOR(pg_catalog.=) k.casttarget
         WHERE k.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND k.castfunc OPERATOR(pg_catalog.<>) 0
           AND (k.castcontext OPERATOR(pg_catalog.<>) 'e' OR k.casttarget OPERATOR(pg_catalog.=) ANY (${ALIASED_TYPES})
                OR kt.typname OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT pg_catalog.name(bw.w) FROM pg_catalog.unnest(${BODY_WORDS}) AS bw(w))))
        UNION ALL SELECT 't', y.oid FROM pg_catalog.pg_type y
         WHERE y.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}
           AND (y.typname OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT pg_catalog.name(bw.w) FROM pg_catalog.unnest(${BODY_WORDS}) AS bw(w)))
                OR (y.typtype OPERATOR(pg_catalog.=) 'd' AND y.typname OPERATOR(pg_catalog.~) ${NOT_NAME}))`;

/**
 * What a write to relation `rel` (an OID expression) fires, as pg_depend's dependent (classid,
 * oid): its triggers (row, statement and constraint ones), its defaults and generated columns
 * (pg_attrdef), its constraints (CHECK, an exclusion constraint's operators, a foreign key's
 * operators and the table it reads) and its indexes (expressions and predicates run on every
 * row written). Each is found by an index on its table.
 */
export function writeFires(rel: string): string {
  return `SELECT 'pg_catalog.pg_trigger'::pg_catalog.regclass AS classid, t.oid FROM pg_catalog.pg_trigger t WHERE t.tgrelid OPERATOR(pg_catalog.=) ${rel}
          UNION ALL SELECT 'pg_catalog.pg_attrdef'::pg_catalog.regclass, a.oid FROM pg_catalog.pg_attrdef a WHERE a.adrelid OPERATOR(pg_catalog.=) ${rel}
          UNION ALL SELECT 'pg_catalog.pg_constraint'::pg_catalog.regclass, k.oid FROM pg_catalog.pg_constraint k WHERE k.conrelid OPERATOR(pg_catalog.=) ${rel}
          UNION ALL SELECT 'pg_catalog.pg_class'::pg_catalog.regclass, x.indexrelid FROM pg_catalog.pg_index x WHERE x.indrelid OPERATOR(pg_catalog.=) ${rel}`;
}

/**
 * A foreign key k, found through pg_depend d on relation `rel` (which the server reads by index),
 * whose action on rel's rows writes to its own table (ON DELETE/UPDATE CASCADE, SET NULL, SET
 * DEFAULT): a write to rel writes there too, and that table's triggers, rules and defaults run.
 */
export function cascadesTo(rel: string): string {
  return `d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass AND d.refobjid OPERATOR(pg_catalog.=) ${rel}
         AND d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_constraint'::pg_catalog.regclass AND k.contype OPERATOR(pg_catalog.=) 'f'
         AND k.confrelid OPERATOR(pg_catalog.=) ${rel} AND (k.confdeltype OPERATOR(pg_catalog.=) ANY ('{c,n,d}'::pg_catalog."char"[]) OR k.confupdtype OPERATOR(pg_catalog.=) ANY ('{c,n,d}'::pg_catalog."char"[]))`;
}

/** The index access methods whose default operator classes a sort, DISTINCT, GROUP BY, merge or hash join uses without naming them: btree and hash, whose OIDs initdb fixes (pg_am.dat). */
const SORT_AND_HASH = `'{403,405}'::pg_catalog.oid[]`;

/**
 * A person's operator o (made since initdb) that a built-in operator b names as its negator or
 * commutator, as `FROM ... WHERE` over both. CREATE OPERATOR fills an empty negator or commutator
 * of the operator it names with the new one's OID (OperatorUpd; PostgreSQL 15.20 asks for
 * ownership of that operator, a superuser or an older server does not), and DROP OPERATOR
 * empties it again; the planner then swaps o in for NOT over b (negate_clause), commutes a clause
 * of b into o, and estimators call it, for a statement that names only b, in a view, a function's
 * body or a policy as well. The link is written in both rows, so it is found from o's side, by a
 * range scan of the OID index (pg_operator has no index on the links), and b's row confirms it.
 */
const BUILTIN_LINKED = `pg_catalog.pg_operator o JOIN pg_catalog.pg_operator b
      ON b.oid OPERATOR(pg_catalog.=) ANY (ARRAY[o.oprnegate, o.oprcom]) AND o.oid OPERATOR(pg_catalog.=) ANY (ARRAY[b.oprnegate, b.oprcom])
   WHERE o.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND b.oid OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID}`;

/**
 * The built-in types under type `type` (an OID expression, a type made since initdb), as `FROM`
 * over b(oid): its base type if a domain, its element type if an array, and that one's element
 * when it is a built-in array (a domain over text[]). The server looks a cast to or from a domain
 * up by its base type, and coerces an array element by element (parse_coerce.c:
 * find_coercion_pathway calls getBaseType, then the element types' pathway): an explicit cast to
 * a domain over text, to an array of it or to a domain over text[] runs a person's cast to text.
 * A type under it made since initdb is reached by the walk itself and asked the same.
 */
function builtinUnder(type: string): string {
  return `pg_catalog.pg_type bt CROSS JOIN LATERAL pg_catalog.unnest(ARRAY[bt.typbasetype, bt.typelem]) AS u(oid)
        JOIN pg_catalog.pg_type ut ON ut.oid OPERATOR(pg_catalog.=) u.oid AND u.oid OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID} AND bt.oid OPERATOR(pg_catalog.=) ${type}
        CROSS JOIN LATERAL pg_catalog.unnest(ARRAY[ut.oid, ut.typelem]) AS b(oid)`;
}

/**
 * A person's code the server may call for any statement, whatever it names: a cast between two
 * built-in types through a function, made since initdb (the server picks an implicit or
 * assignment one while it resolves a built-in function's or operator's arguments; an explicit one
 * is followed when the statement names its target type, $5); a default btree or hash operator class for a built-in type (what a
 * sort, DISTINCT, GROUP BY or join of that type compares with); a member added since initdb
 * to a built-in operator family; and an operator a built-in one names as its negator or commutator
 * (BUILTIN_LINKED), rooted at the built-in's name. Each as `(root, kind, oid)`, found by the catalog's OID index
 * (IMPLICIT_CODE asks the same for the first check, explicit casts included).
 */
const IMPLICIT_ROOTS = `SELECT pg_catalog.concat('cast ', pg_catalog.format_type(k.castsource, NULL), ' AS ', pg_catalog.format_type(k.casttarget, NULL)) AS root,
         'p' COLLATE pg_catalog."C" AS kind, k.castfunc AS oid
    FROM pg_catalog.pg_cast k
   WHERE k.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND k.castfunc OPERATOR(pg_catalog.<>) 0
     AND k.castsource OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID} AND k.casttarget OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID}
     AND (k.castcontext OPERATOR(pg_catalog.<>) 'e'
          OR EXISTS (SELECT FROM pg_catalog.pg_type u WHERE (u.oid OPERATOR(pg_catalog.=) k.casttarget OR u.typelem OPERATOR(pg_catalog.=) k.casttarget)
                        AND u.typname OPERATOR(pg_catalog.=) ANY ($5::pg_catalog.name[])))
  UNION ALL SELECT pg_catalog.concat('operator class ', c.opcname), 'p', m.amproc
    FROM pg_catalog.pg_opclass c JOIN pg_catalog.pg_amproc m ON m.amprocfamily OPERATOR(pg_catalog.=) c.opcfamily
   WHERE c.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND c.opcdefault AND c.opcintype OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID}
     AND c.opcmethod OPERATOR(pg_catalog.=) ANY (${SORT_AND_HASH})
  UNION ALL SELECT pg_catalog.concat('operator class ', c.opcname), 'o', m.amopopr
    FROM pg_catalog.pg_opclass c JOIN pg_catalog.pg_amop m ON m.amopfamily OPERATOR(pg_catalog.=) c.opcfamily
   WHERE c.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND c.opcdefault AND c.opcintype OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID}
     AND c.opcmethod OPERATOR(pg_catalog.=) ANY (${SORT_AND_HASH})
  UNION ALL SELECT pg_catalog.concat('operator family ', f.opfname), 'p', m.amproc
    FROM pg_catalog.pg_amproc m JOIN pg_catalog.pg_opfamily f ON f.oid OPERATOR(pg_catalog.=) m.amprocfamily
   WHERE m.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND m.amprocfamily OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID}
  UNION ALL SELECT pg_catalog.concat('operator family ', f.opfname), 'o', m.amopopr
    FROM pg_catalog.pg_amop m JOIN pg_catalog.pg_opfamily f ON f.oid OPERATOR(pg_catalog.=) m.amopfamily
   WHERE m.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND m.amopfamily OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID}
  UNION ALL SELECT pg_catalog.concat('operator ', b.oprname), 'o', o.oid FROM ${BUILTIN_LINKED}`;

/**
 * True when the database holds any of IMPLICIT_ROOTS: asked by the first check on every call, each
 * a range scan of a small catalog's OID index that finds nothing in a database without them. An
 * operator added to a built-in family is asked too: the planner looks a family's members up by
 * strategy and type without the statement naming them (a cross-type comparison it derives from an
 * equivalence class, the test operator that proves an index predicate or a CHECK constraint, a
 * partition bound's comparison) and runs them while it plans. So is a person's operator linked
 * from a built-in one (BUILTIN_LINKED): the built-in may be reached by name, keyword form, view,
 * body or policy alike.
 */
export const IMPLICIT_CODE = `(EXISTS (SELECT FROM pg_catalog.pg_cast k WHERE k.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND k.castfunc OPERATOR(pg_catalog.<>) 0
            AND k.castsource OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID} AND k.casttarget OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID})
     OR EXISTS (SELECT FROM pg_catalog.pg_opclass c WHERE c.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND c.opcdefault
                   AND c.opcintype OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID} AND c.opcmethod OPERATOR(pg_catalog.=) ANY (${SORT_AND_HASH}))
     OR EXISTS (SELECT FROM pg_catalog.pg_amproc m WHERE m.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND m.amprocfamily OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID})
     OR EXISTS (SELECT FROM pg_catalog.pg_amop m WHERE m.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND m.amopfamily OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID})
     OR EXISTS (SELECT FROM ${BUILTIN_LINKED}))`;

/**
 * The operator classes of relation `rel`'s indexes (an OID expression) whose code is a person's:
 * the class, its family or one of the family's members made since initdb. An index scan calls
 * the class's support functions (a btree's comparator) and operators for a statement that names
 * only the table and built-in operators. As `FROM ... WHERE` over pg_opclass ixo and `member`
 * (pg_amproc m or pg_amop m, joined on the family), for the caller's SELECT list.
 */
function indexClasses(rel: string, member: 'amproc' | 'amop'): string {
  return `pg_catalog.pg_index ix CROSS JOIN LATERAL pg_catalog.unnest(ix.indclass) AS ixc(opc)
        JOIN pg_catalog.pg_opclass ixo ON ixo.oid OPERATOR(pg_catalog.=) ixc.opc
        JOIN pg_catalog.pg_${member} m ON m.${member}family OPERATOR(pg_catalog.=) ixo.opcfamily
       WHERE ix.indrelid OPERATOR(pg_catalog.=) ${rel}
         AND (ixo.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} OR ixo.opcfamily OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} OR m.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID})`;
}

/**
 * True when relation `rel` (an OID expression) has an index of an operator class made since
 * initdb (indexClasses; a member added since to a built-in family is IMPLICIT_CODE's): read from
 * the index's own row, found by the index on pg_index.indrelid (`OFFSET 0` keeps the planner
 * from hashing the whole of pg_index instead).
 */
export function personIndexClass(rel: string): string {
  return `EXISTS (SELECT FROM pg_catalog.pg_index ix WHERE ix.indrelid OPERATOR(pg_catalog.=) ${rel}
                   AND EXISTS (SELECT FROM pg_catalog.unnest(ix.indclass) AS k(opc) WHERE k.opc OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}) OFFSET 0)`;
}

/**
 * The row-level-security policies the server adds to every read and write of relation r (the
 * walk's row) when r has relrowsecurity: pg_policy y, with pg_class yc. As `FROM ... WHERE`.
 */
const LIVE_POLICIES = `pg_catalog.pg_policy y JOIN pg_catalog.pg_class yc ON yc.oid OPERATOR(pg_catalog.=) y.polrelid`;
const LIVE_POLICY = `y.polrelid OPERATOR(pg_catalog.=) r.oid AND yc.relrowsecurity`;

/** A policy's stored trees (pg_policy y), USING and WITH CHECK, as one text. */
const POLICY_TREES = `pg_catalog.concat(y.polqual::pg_catalog.text, ' ', y.polwithcheck::pg_catalog.text)`;

/**
 * True when relation `rel` (an OID expression) has a row-level-security policy the walk would go
 * on from: one using a function, operator, type or relation made since initdb (pg_depend), one
 * reading any other relation (`:relid` in its trees: pg_depend records nothing on what initdb
 * pins), or one calling by OID a built-in the policy refuses or an executor statistics function
 * (`judged`, the bound parameter of judgedFunctionNames). The context recipe's policy
 * (current_setting, a cast, `=`) has none of these. Ask it only of a table with relrowsecurity
 * (`c.relrowsecurity AND ...`): no other pays for it.
 */
export function personPolicy(rel: string, judged: string): string {
  return `EXISTS (SELECT FROM pg_catalog.pg_policy y WHERE y.polrelid OPERATOR(pg_catalog.=) ${rel}
            AND (EXISTS (SELECT FROM pg_catalog.pg_depend d
                          WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_policy'::pg_catalog.regclass AND d.objid OPERATOR(pg_catalog.=) y.oid
                            AND d.refobjid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND d.refobjid OPERATOR(pg_catalog.<>) ${rel})
                 OR EXISTS (SELECT FROM pg_catalog.regexp_matches(${POLICY_TREES}, ':relid (\\d+)', 'g') AS m
                             WHERE pg_catalog.oidin(pg_catalog.textout(m[1])) OPERATOR(pg_catalog.<>) ${rel})
                 OR ${handsRelationByName(POLICY_TREES)}
                 OR ${callsDispatcher(POLICY_TREES)}
                 OR EXISTS (SELECT FROM pg_catalog.regexp_matches(${POLICY_TREES}, ':(?:funcid|opfuncid|aggfnoid|winfnoid) (\\d+)', 'g') AS m
                             JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) pg_catalog.oidin(pg_catalog.textout(m[1]))
                            WHERE pg_catalog.array_position(${judged}, p.proname) IS NOT NULL)) OFFSET 0)`;
}

/**
 * The built-in function names a person's object may not call by OID (builtinObjection's refusals
 * on a read-only connection, which hold those on every one: the walk then judges with the
 * connection's mode; and the executor's statistics functions), as the value of a bound name[] parameter: bound
 * rather than written into the text as a constant, the server plans a check that holds it in a
 * fraction of the time. Compared with array_position rather than IN, as the planner estimates an
 * IN list element by element, which for these names costs more than the lookup itself.
 */
let judgedFunctions: string | undefined;
export function judgedFunctionNames(): string {
  judgedFunctions ??= textArray([...new Set([...READ_ONLY_REFUSED_BUILTIN_NAMES, ...PG_EXECUTOR_STATISTICS])]);
  return judgedFunctions;
}

/**
 * The built-in function names builtinObjection refuses on a connection of this mode, as the value
 * of a bound array parameter (as judgedFunctionNames): the walk's $8. The read-only list holds the
 * other, so a check that only decides whether to walk asks it.
 */
let refusedBuiltins: string | undefined;
let readOnlyRefusedBuiltins: string | undefined;
export function refusedBuiltinNames(readOnly = false): string {
  if (readOnly) {
    readOnlyRefusedBuiltins ??= textArray(READ_ONLY_REFUSED_BUILTIN_NAMES);
    return readOnlyRefusedBuiltins;
  }
  refusedBuiltins ??= textArray(REFUSED_BUILTIN_NAMES);
  return refusedBuiltins;
}

/**
 * A function (pg_proc p) attribute notation can call, `(x).f` as f(x): one that takes one argument,
 * or more whose others have defaults (ParseFuncOrColumn expands defaults for it).
 */
const ONE_ARGUMENT = `p.pronargs OPERATOR(pg_catalog.>=) 1 AND p.pronargs OPERATOR(pg_catalog.-) p.pronargdefaults OPERATOR(pg_catalog.<=) 1`;

/** The functions that read a relation whole by its name (table_to_xml and its family), quoted for an IN list. */
const READS_BY_NAME = quoted(Object.keys(generated.PG_NAMES_RELATION));

/** A signed byte of a stored constant's value, as the tree prints it, as its unsigned value. */
const byte = (n: number, scale: number): string =>
  `((pg_catalog.int8in(pg_catalog.textout(m[${n}])) OPERATOR(pg_catalog.+) 256) OPERATOR(pg_catalog.%) 256 OPERATOR(pg_catalog.*) ${scale})`;

/**
 * The relations the stored tree `tree` (over the rows of `from`, filtered by `where`) names as
 * regclass constants, when the tree calls a function that reads a relation whole by its name
 * (`table_to_xml('pg_catalog.pg_authid', ...)` in a view or a BEGIN ATOMIC body): the server
 * stores the name as the relation's OID, which neither `:relid` nor pg_depend shows for what
 * initdb pins. The OID is read from the constant's four bytes (little-endian, as printed). As rows
 * `('r', oid)` for the walk.
 */
function namedByConstant(tree: string, from: string, where: string): string {
  return `SELECT 'r', (${byte(1, 1)} OPERATOR(pg_catalog.+) ${byte(2, 256)} OPERATOR(pg_catalog.+) ${byte(3, 65536)} OPERATOR(pg_catalog.+) ${byte(4, 16777216)})::pg_catalog.oid
        FROM ${from} CROSS JOIN LATERAL pg_catalog.regexp_matches(${tree}, ':consttype 2205 [^{}]*:constvalue 4 \\[ (-?\\d+) (-?\\d+) (-?\\d+) (-?\\d+) ', 'g') AS m
       WHERE ${where}
         AND ${callsReadByName(tree)}`;
}

/**
 * The functions whose relation argument the walk follows when a stored tree gives it as a regclass
 * constant: those that read a relation whole by its name, and those that run its own code
 * (PG_RUNS_RELATION_CODE: satisfies_hash_partition, bt_index_check, ...; postgres-relation-code.ts).
 */
const FOLDS_BY_NAME = quoted([...Object.keys(generated.PG_NAMES_RELATION), ...Object.keys(generated.PG_RUNS_RELATION_CODE)]);

/** True when the stored tree `tree` calls a function whose regclass constants the walk follows (namedByConstant). */
function callsReadByName(tree: string): string {
  return `EXISTS (SELECT FROM pg_catalog.pg_proc f WHERE f.proname OPERATOR(pg_catalog.=) ANY (ARRAY[${FOLDS_BY_NAME}]::pg_catalog.name[])
                      AND pg_catalog.strpos(${tree}, pg_catalog.concat(':funcid ', f.oid, ' ')) OPERATOR(pg_catalog.>) 0)`;
}

/**
 * True when the stored tree `tree` hands a regclass constant to a function that reads a relation
 * whole by its name: the walk then goes on from that relation (namedByConstant), so the stages
 * before it do not settle the object.
 */
export function handsRelationByName(tree: string): string {
  return callsReadByName(tree);
}

/**
 * True when the stored tree `tree` calls a function that reads a relation whole by its name with
 * a first argument that is no regclass constant (a parameter, a variable, a column's value, or an
 * expression such as to_regclass('x') or c.oid::regclass): the relation is chosen only when the
 * statement runs, so the walk cannot follow it (namedByConstant follows constants only). A call's
 * fields up to its arguments hold no braces, so its first argument is the node after `:args (`.
 */
function handsRelationAtRunTime(tree: string): string {
  return `EXISTS (SELECT FROM pg_catalog.regexp_matches(${tree}, ':funcid (\\d+) [^{}]*:args \\((\\{CONST :consttype 2205 )?', 'g') AS m
                   JOIN pg_catalog.pg_proc f ON f.oid OPERATOR(pg_catalog.=) pg_catalog.oidin(pg_catalog.textout(m[1]))
                  WHERE m[2] IS NULL AND f.proname OPERATOR(pg_catalog.=) ANY (ARRAY[${READS_BY_NAME}]::pg_catalog.name[]))`;
}

/**
 * True when the SQL or PL/pgSQL text body `body` calls a function that reads a relation whole by
 * its name with anything but one plain string literal as its first argument (`table_to_xml(t,
 * ...)`, `table_to_xml(to_regclass(x), ...)`), or names such a function without a call the text
 * shows: each occurrence of the name must be followed by `(`, the literal and a comma. A name
 * written with Unicode escapes (`U&"t!0061ble_to_xml" UESCAPE '!'`, unicodeEscapes) counts as
 * such a function named without a call the text shows.
 */
function textHandsRelationAtRunTime(body: string): string {
  return `(EXISTS (SELECT FROM pg_catalog.regexp_matches(${body}, '\\m(table_to_xml\\w*)\\M("?\\s*\\(\\s*''(?:[^'']|'''')*''\\s*,)?', 'gi') AS m
                  WHERE m[2] IS NULL AND pg_catalog.lower(m[1]) OPERATOR(pg_catalog.=) ANY (ARRAY[${READS_BY_NAME}]::pg_catalog.text[]))
          OR EXISTS (SELECT FROM (${unicodeEscapes(body, TOKEN)}) AS u
                      WHERE NOT u.string AND pg_catalog.lower(u.text) OPERATOR(pg_catalog.=) ANY (ARRAY[${READS_BY_NAME}]::pg_catalog.text[])))`;
}

/**
 * The stored expression trees of what a reached object runs, read where pg_depend records nothing
 * (it records no dependency on what initdb pins, so a built-in these call is only in the tree):
 * a relation's rewrite rules and live row-level-security policies; a function's BEGIN ATOMIC body and default arguments; a domain's
 * CHECK constraints; and for a written table its CHECK constraints, defaults and generated
 * columns, triggers' WHEN clauses and index expressions and predicates. One row per tree, `tree`.
 */
export const STORED_TREES = `
       SELECT w.ev_action::pg_catalog.text AS tree FROM pg_catalog.pg_rewrite w
        WHERE r.kind OPERATOR(pg_catalog.=) 'r' AND w.ev_class OPERATOR(pg_catalog.=) r.oid
       UNION ALL SELECT ${POLICY_TREES} FROM ${LIVE_POLICIES}
        WHERE r.kind OPERATOR(pg_catalog.=) 'r' AND ${LIVE_POLICY}
       UNION ALL SELECT q.prosqlbody::pg_catalog.text FROM pg_catalog.pg_proc q
        WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND q.oid OPERATOR(pg_catalog.=) r.oid AND q.prosqlbody IS NOT NULL
       UNION ALL SELECT q.proargdefaults::pg_catalog.text FROM pg_catalog.pg_proc q
        WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND q.oid OPERATOR(pg_catalog.=) r.oid AND q.proargdefaults IS NOT NULL
       UNION ALL SELECT c.conbin::pg_catalog.text FROM pg_catalog.pg_constraint c
        WHERE r.kind OPERATOR(pg_catalog.=) 't' AND c.contypid OPERATOR(pg_catalog.=) r.oid AND c.conbin IS NOT NULL
       UNION ALL SELECT c.conbin::pg_catalog.text FROM pg_catalog.pg_constraint c
        WHERE r.kind OPERATOR(pg_catalog.=) 'w' AND c.conrelid OPERATOR(pg_catalog.=) r.oid AND c.conbin IS NOT NULL
       UNION ALL SELECT a.adbin::pg_catalog.text FROM pg_catalog.pg_attrdef a
        WHERE r.kind OPERATOR(pg_catalog.=) 'w' AND a.adrelid OPERATOR(pg_catalog.=) r.oid
       UNION ALL SELECT g.tgqual::pg_catalog.text FROM pg_catalog.pg_trigger g
        WHERE r.kind OPERATOR(pg_catalog.=) 'w' AND g.tgrelid OPERATOR(pg_catalog.=) r.oid AND g.tgqual IS NOT NULL
       UNION ALL SELECT pg_catalog.concat(i.indexprs::pg_catalog.text, ' ', i.indpred::pg_catalog.text) FROM pg_catalog.pg_index i
        WHERE r.kind OPERATOR(pg_catalog.=) 'w' AND i.indrelid OPERATOR(pg_catalog.=) r.oid AND (i.indexprs IS NOT NULL OR i.indpred IS NOT NULL)`;

/** What a stored-tree-or-text-body finding (treeOrBodyFinding) looks for. */
export interface TreeOrBody {
  /** The finding's letter, first in what it returns. */
  readonly letter: string;
  /** SQL values written after the letter, one word each: in the stored-tree part and in the text-body part. */
  readonly word?: { readonly tree: string; readonly body: string };
  /** A further LATERAL subquery over the stored tree `t.tree`, as `d`, which treeCondition and word.tree may read. */
  readonly treeRows?: string;
  /** True for a stored tree `t.tree` (of reach r) that is refused. */
  readonly treeCondition: string;
  /** A cheap test of the text body (pg_proc p) that the body may be refused, so bodyCondition runs on those bodies only. */
  readonly bodyFilter: string;
  /** True for a SQL or PL/pgSQL text body (pg_proc p) that is refused. */
  readonly bodyCondition: string;
}

/**
 * What the walk reached that `f` refuses, as `<letter> [<word> ]<root> calls <name>`, or NULL:
 * first a stored tree of an object created since initdb (STORED_TREES) where f.treeCondition
 * holds, `<name>` the function, type or relation whose tree it is; then the SQL or PL/pgSQL text
 * body of a function created since initdb (not a BEGIN ATOMIC one: that is a stored tree) where
 * f.bodyFilter and then f.bodyCondition hold, `<name>` the function. The CASE keeps
 * f.bodyCondition after every other condition: the planner orders a WHERE clause's conditions by
 * their cost, and the body's regular expressions are to run only on what the others let through.
 */
export function treeOrBodyFinding(f: TreeOrBody): string {
  const word = (w: string | undefined): string => (w === undefined ? '' : `${w}, ' ', `);
  return `COALESCE(
  (SELECT pg_catalog.concat('${f.letter} ', ${word(f.word?.tree)}r.root, ' calls ', CASE WHEN r.kind OPERATOR(pg_catalog.=) 'p' THEN pg_catalog.concat(p.proname, '()') WHEN r.kind OPERATOR(pg_catalog.=) 't' THEN y.typname::pg_catalog.text ELSE c.relname::pg_catalog.text END)
     FROM reach r CROSS JOIN LATERAL (${STORED_TREES}) AS t${f.treeRows === undefined ? '' : ` CROSS JOIN LATERAL (${f.treeRows}) AS d`}
     LEFT JOIN pg_catalog.pg_proc p ON r.kind OPERATOR(pg_catalog.=) 'p' AND p.oid OPERATOR(pg_catalog.=) r.oid
     LEFT JOIN pg_catalog.pg_type y ON r.kind OPERATOR(pg_catalog.=) 't' AND y.oid OPERATOR(pg_catalog.=) r.oid
     LEFT JOIN pg_catalog.pg_class c ON r.kind OPERATOR(pg_catalog.<>) ALL ('{p,t}'::pg_catalog.text[]) AND c.oid OPERATOR(pg_catalog.=) r.oid
    WHERE r.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND ${f.treeCondition}
    LIMIT 1),
  (SELECT pg_catalog.concat('${f.letter} ', ${word(f.word?.body)}r.root, ' calls ', p.proname, '()')
     FROM reach r JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) r.oid
    WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND p.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND ${TEXT_LANGUAGE}
      AND p.prosqlbody IS NULL AND ${f.bodyFilter}
      AND CASE WHEN ${f.bodyCondition} THEN true ELSE false END
    LIMIT 1))`;
}

/**
 * The built-in functions that run the own code of the type an argument gives by OID
 * (type-dispatch.ts), quoted for an IN list. (Those that run a relation's own code, such as
 * satisfies_hash_partition, are postgres-relation-code.ts's.)
 */
const TYPE_DISPATCHERS = Object.keys(generated.PG_RUNS_TYPE_CODE);
const DISPATCHERS = quoted(TYPE_DISPATCHERS);

/** The OIDs of the dispatchers (initdb's), as a regular expression alternation: one value for the whole walk. */
const DISPATCHER_OIDS = `(SELECT pg_catalog.string_agg(pg_catalog.textin(pg_catalog.oidout(d.oid)), '|') FROM pg_catalog.pg_proc d
      WHERE d.proname OPERATOR(pg_catalog.=) ANY (ARRAY[${DISPATCHERS}]::pg_catalog.name[]) AND d.oid OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID})`;

/** Any character of a stored tree but a brace or a backslash (which escapes a brace in a name). */
const NO_BRACE = String.raw`[^{}\\]`;

/** One node of a stored tree, `{...}`, nested at most five deep: an argument of a call. */
const NODE = Array.from({ length: 4 }).reduce<string>((inner) => String.raw`\{(?:${NO_BRACE}|${inner})*\}`, String.raw`\{${NO_BRACE}*\}`);

/**
 * A constant OID as the stored tree holds an argument of type oid: a constant of type oid,
 * regtype, regclass or int4, maybe relabelled to oid; its first four bytes (little-endian, as
 * printed, each signed) captured.
 */
const OID_CONSTANT = String.raw`(?:\{RELABELTYPE :arg )?\{CONST :consttype (?:23|26|2205|2206) [^{}]*:constvalue 4 \[ (-?\d+) (-?\d+) (-?\d+) (-?\d+) `;

/** The call's piece of a stored tree (from its OID on) whose OID argument (its second) is a constant. */
const TYPE_CALL = literal(String.raw`^\d+ [^{}]*:args \(${NODE} ${OID_CONSTANT}`);

/** A signed byte `n` of the match `d.m`, as its unsigned value times `scale`. */
const dispatchedByte = (n: number, scale: number): string =>
  `((pg_catalog.int8in(pg_catalog.textout(d.m[${n}])) OPERATOR(pg_catalog.+) 256) OPERATOR(pg_catalog.%) 256 OPERATOR(pg_catalog.*) ${scale})`;

/** The OID a dispatcher call `d` (dispatchedIn) is handed as a constant. */
const DISPATCHED_OID = `(${dispatchedByte(1, 1)} OPERATOR(pg_catalog.+) ${dispatchedByte(2, 256)} OPERATOR(pg_catalog.+) ${dispatchedByte(3, 65536)} OPERATOR(pg_catalog.+) ${dispatchedByte(4, 16777216)})::pg_catalog.oid`;

/**
 * Each call of a type-dispatching function (array_in, domain_in, ...) in the stored tree `tree`,
 * as rows (name, m): `m` the bytes of the constant OID it is handed, or NULL when that argument is anything
 * else (a parameter, a column's value, an expression, a sub-select): chosen when it runs. The tree
 * is cut before each such call, so a piece starts with the call's OID; a call nested in another's
 * first argument cuts that argument short, which then reads as chosen at run time (refused).
 */
function dispatchedIn(tree: string): string {
  return `SELECT f.proname, pg_catalog.regexp_match(x.piece, ${TYPE_CALL}) AS m
          FROM pg_catalog.regexp_split_to_table(${tree}, pg_catalog.concat('\\{FUNCEXPR :funcid (?=(?:', ${DISPATCHER_OIDS}, ') )')) WITH ORDINALITY AS x(piece, n)
          JOIN pg_catalog.pg_proc f ON f.oid OPERATOR(pg_catalog.=) pg_catalog.oidin(pg_catalog.textout(pg_catalog.substring(x.piece, '^\\d+')))
         WHERE x.n OPERATOR(pg_catalog.>) 1`;
}

/** True when the stored tree `tree` calls a type-dispatching function (dispatchedIn): the walk judges what it is handed, so earlier stages do not settle it. */
export function callsDispatcher(tree: string): string {
  return `${tree} OPERATOR(pg_catalog.~) pg_catalog.concat(':funcid (?:', ${DISPATCHER_OIDS}, ') ')`;
}

/** A dispatcher's name as a word of a text body, any case: the body is then read for how it calls it. */
const DISPATCHER_WORD = literal(String.raw`\m(${TYPE_DISPATCHERS.join('|')})\M`);

/** A string literal of a text body. */
const TEXT_STRING = "'(?:[^']|'')*'";

/**
 * True when the SQL or PL/pgSQL text body `body` calls a type-dispatching function with anything
 * but a constant as the OID it dispatches on (digits, or a string literal cast to regtype,
 * regclass or oid: `'int4'::regtype`), or names one without a call the text shows: each
 * occurrence of a dispatcher's name must be followed by `(`, a first argument without
 * parentheses, a comma and the constant. A name written with Unicode escapes (`U&"arr!0061y_in" UESCAPE '!'`, unicodeEscapes) counts as one
 * named without a call the text shows.
 */
function textDispatchesAtRunTime(body: string): string {
  const constant = String.raw`(?:\d+|${TEXT_STRING}(?:\s*::\s*(?:pg_catalog\s*\.\s*)?(?:regtype|regclass|oid))*)`;
  const types = literal(String.raw`\m(${TYPE_DISPATCHERS.join('|')})\M("?\s*\(\s*(?:${TEXT_STRING}|[^,()']*)\s*,\s*${constant}\s*[,)])?`);
  return `(EXISTS (SELECT FROM pg_catalog.regexp_matches(${body}, ${types}, 'gi') AS m WHERE m[2] IS NULL)
        OR EXISTS (SELECT FROM (${unicodeEscapes(body, TOKEN)}) AS u
                    WHERE NOT u.string AND pg_catalog.lower(u.text) OPERATOR(pg_catalog.=) ANY (ARRAY[${DISPATCHERS}]::pg_catalog.text[])))`;
}

/**
 * `reach(root, kind, oid)`: each object the statement reaches (kind r relation, p function, o
 * operator, t type, w relation written: read too, and what a write to it fires is followed),
 * with `root`, what the statement named that leads to it. Parameters $1..$5 as reachValues, $7
 * as writtenValue; `writes`, the call may write (its transaction is not read-only), so what its
 * functions' bodies write is followed as written; `cascades`, a written table's foreign keys'
 * CASCADE / SET NULL / SET DEFAULT actions are followed to the tables they write. Where rows are
 * separated they are not: the fk-action finding refuses every delete or update such an action
 * follows from, by the statement or by the code it reaches (postgres-fk-actions.ts), so no
 * statement that runs fires one, and following it would judge code that an INSERT, which no
 * action follows from, never runs. Set semantics (UNION) end the recursion on cycles.
 */
export const reachCte = (writes: boolean, cascades: boolean): string => `reach(root, kind, oid) AS (
  SELECT pg_catalog.textin(pg_catalog.regclassout(r)), 'r' COLLATE pg_catalog."C", r::pg_catalog.oid
    FROM pg_catalog.unnest($1::pg_catalog.text[]) AS n(name) CROSS JOIN LATERAL pg_catalog.to_regclass(n.name) AS r
   WHERE r IS NOT NULL
  UNION SELECT pg_catalog.textin(pg_catalog.regclassout(w)), 'w', w::pg_catalog.oid
    FROM pg_catalog.unnest($7::pg_catalog.text[]) AS n(name) CROSS JOIN LATERAL pg_catalog.to_regclass(n.name) AS w
   WHERE w IS NOT NULL
  UNION SELECT pg_catalog.concat(p.proname, '()'), 'p', p.oid FROM pg_catalog.pg_proc p
   WHERE p.proname OPERATOR(pg_catalog.=) ANY ($2::pg_catalog.name[]) AND p.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}
  UNION SELECT pg_catalog.concat(p.proname, '()'), 'p', p.oid FROM pg_catalog.pg_proc p
   WHERE p.proname OPERATOR(pg_catalog.=) ANY ($3::pg_catalog.name[]) AND ${ONE_ARGUMENT} AND p.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}
  UNION SELECT pg_catalog.concat('operator ', o.oprname), 'o', o.oid FROM pg_catalog.pg_operator o
   WHERE o.oprname OPERATOR(pg_catalog.=) ANY ($4::pg_catalog.name[]) AND o.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}
  UNION SELECT pg_catalog.concat('type ', t.typname), 't', t.oid FROM pg_catalog.pg_type t
   WHERE t.typname OPERATOR(pg_catalog.=) ANY ($5::pg_catalog.name[]) AND t.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}
  UNION SELECT pg_catalog.concat('cast ', pg_catalog.format_type(k.castsource, NULL), ' AS ', pg_catalog.format_type(k.casttarget, NULL)), 'p', k.castfunc
    FROM pg_catalog.pg_cast k JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) k.casttarget
    JOIN pg_catalog.pg_type f ON f.oid OPERATOR(pg_catalog.=) k.castsource
   WHERE t.typname OPERATOR(pg_catalog.=) ANY ($5::pg_catalog.name[]) AND f.typname OPERATOR(pg_catalog.=) ANY ($5::pg_catalog.name[])
     AND k.castfunc OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}
  UNION SELECT i.root, i.kind, i.oid FROM (${IMPLICIT_ROOTS}) AS i
  UNION
  SELECT r.root, e.kind, e.oid
    FROM reach r CROSS JOIN LATERAL (
      SELECT ${KIND_OF_CLASS} COLLATE pg_catalog."C" AS kind, d.refobjid AS oid
        FROM pg_catalog.pg_rewrite w JOIN pg_catalog.pg_depend d
          ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND d.objid OPERATOR(pg_catalog.=) w.oid
       WHERE r.kind OPERATOR(pg_catalog.=) 'r' AND w.ev_class OPERATOR(pg_catalog.=) r.oid AND d.refobjid OPERATOR(pg_catalog.<>) r.oid
      UNION ALL SELECT 'r', pg_catalog.oidin(pg_catalog.textout(m[1]))
        FROM pg_catalog.pg_rewrite w CROSS JOIN LATERAL pg_catalog.regexp_matches(w.ev_action::pg_catalog.text, ':relid (\\d+)', 'g') AS m
       WHERE r.kind OPERATOR(pg_catalog.=) 'r' AND w.ev_class OPERATOR(pg_catalog.=) r.oid
      UNION ALL SELECT CASE WHEN ${writes} AND p.prosqlbody::pg_catalog.text OPERATOR(pg_catalog.~) ':commandType [2-5] ' THEN 'w' ELSE 'r' END, pg_catalog.oidin(pg_catalog.textout(m[1]))
        FROM pg_catalog.pg_proc p CROSS JOIN LATERAL pg_catalog.regexp_matches(p.prosqlbody::pg_catalog.text, ':relid (\\d+)', 'g') AS m
       WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND p.oid OPERATOR(pg_catalog.=) r.oid AND p.prosqlbody IS NOT NULL
      UNION ALL SELECT 'r', i.inhrelid FROM pg_catalog.pg_inherits i
       WHERE r.kind OPERATOR(pg_catalog.=) 'r' AND i.inhparent OPERATOR(pg_catalog.=) r.oid
      UNION ALL SELECT 't', pg_catalog.oidin(pg_catalog.textout(x.w))
        FROM pg_catalog.pg_proc p CROSS JOIN LATERAL pg_catalog.unnest(${BODY_WORDS}) AS x(w)
       WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND p.oid OPERATOR(pg_catalog.=) r.oid AND ${TEXT_LANGUAGE} AND p.prosqlbody IS NULL
         AND p.prosrc OPERATOR(pg_catalog.~*) ${DISPATCHER_WORD}
         AND CASE WHEN x.w OPERATOR(pg_catalog.~) '^[0-9]{1,10}$' THEN pg_catalog.int8in(pg_catalog.textout(x.w)) OPERATOR(pg_catalog.<) 4294967296 ELSE false END
      UNION ALL ${namedByConstant('w.ev_action::pg_catalog.text', 'pg_catalog.pg_rewrite w', `r.kind OPERATOR(pg_catalog.=) 'r' AND w.ev_class OPERATOR(pg_catalog.=) r.oid`)}
      UNION ALL ${namedByConstant('p.prosqlbody::pg_catalog.text', 'pg_catalog.pg_proc p', `r.kind OPERATOR(pg_catalog.=) 'p' AND p.oid OPERATOR(pg_catalog.=) r.oid AND p.prosqlbody IS NOT NULL`)}
      UNION ALL ${namedByConstant(POLICY_TREES, LIVE_POLICIES, `r.kind OPERATOR(pg_catalog.=) 'r' AND ${LIVE_POLICY}`)}
      UNION ALL SELECT ${KIND_OF_CLASS}, d.refobjid
        FROM ${LIVE_POLICIES} JOIN pg_catalog.pg_depend d
          ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_policy'::pg_catalog.regclass AND d.objid OPERATOR(pg_catalog.=) y.oid
       WHERE r.kind OPERATOR(pg_catalog.=) 'r' AND ${LIVE_POLICY} AND d.refobjid OPERATOR(pg_catalog.<>) r.oid
      UNION ALL SELECT 'r', pg_catalog.oidin(pg_catalog.textout(m[1]))
        FROM ${LIVE_POLICIES} CROSS JOIN LATERAL pg_catalog.regexp_matches(${POLICY_TREES}, ':relid (\\d+)', 'g') AS m
       WHERE r.kind OPERATOR(pg_catalog.=) 'r' AND ${LIVE_POLICY}
      UNION ALL SELECT 'r', r.oid WHERE r.kind OPERATOR(pg_catalog.=) 'w'
      UNION ALL SELECT 'w', i.inhrelid FROM pg_catalog.pg_inherits i
       WHERE r.kind OPERATOR(pg_catalog.=) 'w' AND i.inhparent OPERATOR(pg_catalog.=) r.oid
      UNION ALL SELECT 'w', d.refobjid
        FROM pg_catalog.pg_rewrite w JOIN pg_catalog.pg_depend d
          ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND d.objid OPERATOR(pg_catalog.=) w.oid
       WHERE r.kind OPERATOR(pg_catalog.=) 'w' AND w.ev_class OPERATOR(pg_catalog.=) r.oid
         AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass AND d.refobjid OPERATOR(pg_catalog.<>) r.oid
      UNION ALL SELECT ${KIND_OF_CLASS}, d.refobjid
        FROM (${writeFires('r.oid')}) AS o JOIN pg_catalog.pg_depend d
          ON d.classid OPERATOR(pg_catalog.=) o.classid AND d.objid OPERATOR(pg_catalog.=) o.oid
       WHERE r.kind OPERATOR(pg_catalog.=) 'w' AND d.refobjid OPERATOR(pg_catalog.<>) r.oid
      ${
        cascades
          ? `UNION ALL SELECT 'w', k.conrelid
        FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_constraint k ON k.oid OPERATOR(pg_catalog.=) d.objid
       WHERE r.kind OPERATOR(pg_catalog.=) 'w' AND ${cascadesTo('r.oid')}`
          : ''
      }
      UNION ALL SELECT ${KIND_OF_CLASS}, d.refobjid
        FROM (${relationDefinitions('r.oid')}) AS o JOIN pg_catalog.pg_depend d
          ON d.classid OPERATOR(pg_catalog.=) o.classid AND d.objid OPERATOR(pg_catalog.=) o.oid
       WHERE r.kind OPERATOR(pg_catalog.=) 'r' AND d.refclassid OPERATOR(pg_catalog.=) ANY ${CODE_CLASSES}
      UNION ALL SELECT ${KIND_OF_CLASS}, d.refobjid FROM pg_catalog.pg_depend d
       WHERE r.kind OPERATOR(pg_catalog.=) 'k' AND d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
         AND d.objid OPERATOR(pg_catalog.=) r.oid AND d.refclassid OPERATOR(pg_catalog.=) ANY ${CODE_CLASSES}
      UNION ALL SELECT 'c', u FROM pg_catalog.pg_partitioned_table pt CROSS JOIN LATERAL pg_catalog.unnest(pt.partclass) AS u
       WHERE r.kind OPERATOR(pg_catalog.=) ANY ('{r,k}'::pg_catalog.text[]) AND pt.partrelid OPERATOR(pg_catalog.=) r.oid
      UNION ALL SELECT 'k', i.inhparent FROM pg_catalog.pg_inherits i JOIN pg_catalog.pg_class ic ON ic.oid OPERATOR(pg_catalog.=) i.inhrelid
       WHERE r.kind OPERATOR(pg_catalog.=) ANY ('{r,k}'::pg_catalog.text[]) AND i.inhrelid OPERATOR(pg_catalog.=) r.oid AND ic.relispartition
      UNION ALL SELECT 'p', m.amproc FROM ${indexClasses('r.oid', 'amproc')} AND r.kind OPERATOR(pg_catalog.=) 'r'
      UNION ALL SELECT 'o', m.amopopr FROM ${indexClasses('r.oid', 'amop')} AND r.kind OPERATOR(pg_catalog.=) 'r'
      UNION ALL SELECT 't', a.atttypid FROM pg_catalog.pg_attribute a
       WHERE r.kind OPERATOR(pg_catalog.=) 'r' AND a.attrelid OPERATOR(pg_catalog.=) r.oid AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
      UNION ALL SELECT ${KIND_OF_CLASS}, d.refobjid FROM pg_catalog.pg_depend d
       WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid OPERATOR(pg_catalog.=) r.oid
      UNION ALL SELECT 'p', f::pg_catalog.oid FROM pg_catalog.pg_aggregate g
       CROSS JOIN LATERAL pg_catalog.unnest(ARRAY[g.aggtransfn, g.aggfinalfn, g.aggcombinefn, g.aggserialfn, g.aggdeserialfn, g.aggmtransfn, g.aggminvtransfn, g.aggmfinalfn]) AS f
       WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND g.aggfnoid OPERATOR(pg_catalog.=) r.oid
      UNION ALL SELECT 'p', b.oid FROM pg_catalog.pg_proc p
        JOIN pg_catalog.pg_proc b ON b.prosrc OPERATOR(pg_catalog.=) p.prosrc AND b.prolang OPERATOR(pg_catalog.=) p.prolang
         AND b.oid OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID}
       WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND p.oid OPERATOR(pg_catalog.=) r.oid AND ${INTERNAL_LANGUAGE}
      UNION ALL SELECT CASE WHEN ${writes} AND p.prosrc OPERATOR(pg_catalog.~*) ${WRITE_WORDS} THEN 'w' ELSE 'r' END, c.oid
        FROM pg_catalog.pg_proc p CROSS JOIN LATERAL (SELECT ${BODY_WORDS} AS words) AS b
        JOIN pg_catalog.pg_class c ON c.relname OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT pg_catalog.name(bw.w) FROM pg_catalog.unnest(b.words) AS bw(w))) AND c.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}
       WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND p.oid OPERATOR(pg_catalog.=) r.oid AND NOT p.prosecdef AND ${TEXT_LANGUAGE}
      UNION ALL SELECT 'p', q.oid
        FROM pg_catalog.pg_proc p CROSS JOIN LATERAL (SELECT ${BODY_WORDS} AS words) AS b
        JOIN pg_catalog.pg_proc q ON q.proname OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT pg_catalog.name(bw.w) FROM pg_catalog.unnest(b.words) AS bw(w))) AND q.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}
       WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND p.oid OPERATOR(pg_catalog.=) r.oid AND NOT p.prosecdef AND ${TEXT_LANGUAGE}
      UNION ALL SELECT t.kind, t.oid FROM pg_catalog.pg_proc p CROSS JOIN LATERAL (${TEXT_BODY_UNNAMED}) AS t
       WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND p.oid OPERATOR(pg_catalog.=) r.oid AND NOT p.prosecdef AND ${TEXT_LANGUAGE}
         AND p.prosqlbody IS NULL
      UNION ALL SELECT 'p', f::pg_catalog.oid FROM pg_catalog.pg_operator o
       CROSS JOIN LATERAL pg_catalog.unnest(ARRAY[o.oprcode, o.oprrest, o.oprjoin]) AS f
       WHERE r.kind OPERATOR(pg_catalog.=) 'o' AND o.oid OPERATOR(pg_catalog.=) r.oid
      UNION ALL SELECT 'o', u FROM pg_catalog.pg_operator o CROSS JOIN LATERAL pg_catalog.unnest(ARRAY[o.oprnegate, o.oprcom]) AS u
       WHERE r.kind OPERATOR(pg_catalog.=) 'o' AND o.oid OPERATOR(pg_catalog.=) r.oid
      UNION ALL SELECT 'f', m.amopfamily FROM pg_catalog.pg_amop m
       WHERE r.kind OPERATOR(pg_catalog.=) 'o' AND m.amopopr OPERATOR(pg_catalog.=) r.oid
      UNION ALL SELECT 'p', f::pg_catalog.oid FROM pg_catalog.pg_type t
       CROSS JOIN LATERAL pg_catalog.unnest(ARRAY[t.typinput, t.typoutput, t.typreceive, t.typsend, t.typmodin, t.typmodout, t.typanalyze, t.typsubscript]) AS f
       WHERE r.kind OPERATOR(pg_catalog.=) 't' AND t.oid OPERATOR(pg_catalog.=) r.oid
      UNION ALL SELECT 't', u FROM pg_catalog.pg_type t CROSS JOIN LATERAL pg_catalog.unnest(ARRAY[t.typbasetype, t.typelem]) AS u
       WHERE r.kind OPERATOR(pg_catalog.=) 't' AND t.oid OPERATOR(pg_catalog.=) r.oid
      UNION ALL SELECT 'p', f::pg_catalog.oid FROM pg_catalog.pg_range g
       CROSS JOIN LATERAL pg_catalog.unnest(ARRAY[g.rngcanonical, g.rngsubdiff]) AS f
       WHERE r.kind OPERATOR(pg_catalog.=) 't' AND g.rngtypid OPERATOR(pg_catalog.=) r.oid
      UNION ALL SELECT 'f', c.opcfamily FROM pg_catalog.pg_opclass c
       WHERE r.kind OPERATOR(pg_catalog.=) 't' AND c.opcintype OPERATOR(pg_catalog.=) r.oid
      UNION ALL SELECT 'f', m.amopfamily FROM pg_catalog.pg_amop m
       WHERE r.kind OPERATOR(pg_catalog.=) 't' AND (m.amoplefttype OPERATOR(pg_catalog.=) r.oid OR m.amoprighttype OPERATOR(pg_catalog.=) r.oid)
      UNION ALL SELECT v.kind, v.oid FROM pg_catalog.pg_range g
       CROSS JOIN LATERAL (VALUES ('t' COLLATE pg_catalog."C", g.rngsubtype), ('c', g.rngsubopc)) AS v(kind, oid)
       WHERE r.kind OPERATOR(pg_catalog.=) 't' AND g.rngtypid OPERATOR(pg_catalog.=) r.oid
      UNION ALL SELECT 't', g.rngtypid FROM pg_catalog.pg_range g
       WHERE r.kind OPERATOR(pg_catalog.=) 't' AND g.rngmultitypid OPERATOR(pg_catalog.=) r.oid
      UNION ALL SELECT 'f', c.opcfamily FROM pg_catalog.pg_opclass c
       WHERE r.kind OPERATOR(pg_catalog.=) 'c' AND c.oid OPERATOR(pg_catalog.=) r.oid
      UNION ALL SELECT 'o', m.amopopr FROM pg_catalog.pg_amop m
       WHERE r.kind OPERATOR(pg_catalog.=) 'f' AND m.amopfamily OPERATOR(pg_catalog.=) r.oid
      UNION ALL SELECT 'f', m.amopsortfamily FROM pg_catalog.pg_amop m
       WHERE r.kind OPERATOR(pg_catalog.=) 'f' AND m.amopfamily OPERATOR(pg_catalog.=) r.oid AND m.amopsortfamily OPERATOR(pg_catalog.<>) 0
      UNION ALL SELECT 'p', m.amproc FROM pg_catalog.pg_amproc m
       WHERE r.kind OPERATOR(pg_catalog.=) 'f' AND m.amprocfamily OPERATOR(pg_catalog.=) r.oid
      UNION ALL SELECT 'r', t.typrelid FROM pg_catalog.pg_type t
       WHERE r.kind OPERATOR(pg_catalog.=) 't' AND t.oid OPERATOR(pg_catalog.=) r.oid
      UNION ALL SELECT 'p', k.castfunc FROM pg_catalog.pg_cast k
       WHERE r.kind OPERATOR(pg_catalog.=) 't' AND k.casttarget OPERATOR(pg_catalog.=) r.oid
      UNION ALL SELECT 'p', k.castfunc FROM pg_catalog.pg_cast k
       WHERE r.kind OPERATOR(pg_catalog.=) 't' AND k.castsource OPERATOR(pg_catalog.=) r.oid
      UNION ALL SELECT 'p', k.castfunc FROM ${builtinUnder('r.oid')} JOIN pg_catalog.pg_cast k
          ON k.casttarget OPERATOR(pg_catalog.=) b.oid OR k.castsource OPERATOR(pg_catalog.=) b.oid
       WHERE r.kind OPERATOR(pg_catalog.=) 't' AND k.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND k.castfunc OPERATOR(pg_catalog.<>) 0
      UNION ALL SELECT ${KIND_OF_CLASS}, d.refobjid
        FROM pg_catalog.pg_constraint k JOIN pg_catalog.pg_depend d
          ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_constraint'::pg_catalog.regclass AND d.objid OPERATOR(pg_catalog.=) k.oid
       WHERE r.kind OPERATOR(pg_catalog.=) 't' AND k.contypid OPERATOR(pg_catalog.=) r.oid AND d.refobjid OPERATOR(pg_catalog.<>) r.oid
    ) AS e
   WHERE r.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND e.kind IS NOT NULL
     AND (e.kind OPERATOR(pg_catalog.=) ANY ('{r,w}'::pg_catalog.text[]) OR e.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}
          OR (e.kind OPERATOR(pg_catalog.=) 'p' AND e.oid OPERATOR(pg_catalog.<>) 0))
)`;

/**
 * What the walk found that hanactl refuses, as `<K> <root> <verb> <what>`, or NULL: K is R (reads
 * a refused relation: directly, through a view, a function's body, a foreign table's remote
 * name), E (reads a storage (TOAST) table, relkind t, by OID or as a word of a text body:
 * `E <root> reads <pg_toast_N> of <the relation it serves>`), D (calls a SECURITY DEFINER
 * function created since initdb, `exempt` aside: a SQL condition on pg_proc p), F (reads a
 * foreign table whose remote end cannot be judged). The
 * server's refused relations count when initdb or an extension made them; hanactl's key table
 * wherever it is.
 */
export function reachFinding(exempt: string): string {
  return `COALESCE(
  (SELECT pg_catalog.concat('R ', r.root, ' reads ', c.relname)
     FROM reach r JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) r.oid
    WHERE r.kind OPERATOR(pg_catalog.=) 'r'
      AND ((c.relname OPERATOR(pg_catalog.=) ANY (ARRAY[${REFUSED}]::pg_catalog.name[])
            AND (c.oid OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID}
                 OR EXISTS (SELECT FROM pg_catalog.pg_depend d
                             WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                               AND d.objid OPERATOR(pg_catalog.=) c.oid AND d.deptype OPERATOR(pg_catalog.=) 'e')))
           OR (c.relname OPERATOR(pg_catalog.=) ANY (ARRAY[${SECRETS}]::pg_catalog.name[]) AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])))
    LIMIT 1),
  (SELECT pg_catalog.concat('E ', r.root, ' reads ', c.relname, ' of ', ${TOAST_OWNER('c.oid')})
     FROM reach r JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) r.oid
    WHERE r.kind OPERATOR(pg_catalog.=) ANY ('{r,w}'::pg_catalog.text[]) AND c.relkind OPERATOR(pg_catalog.=) 't'
    LIMIT 1),
  (SELECT CASE WHEN s.fdwname OPERATOR(pg_catalog.<>) 'postgres_fdw' THEN pg_catalog.concat('F ', r.root, ' reads ', c.relname)
               ELSE pg_catalog.concat('R ', r.root, ' reads ', s.remote) END
     FROM reach r JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) r.oid
     CROSS JOIN LATERAL (
       SELECT w.fdwname,
              COALESCE((SELECT pg_catalog.substr(o, 12) FROM pg_catalog.unnest(ft.ftoptions) AS o WHERE o OPERATOR(pg_catalog.~~) 'table\\_name=%' LIMIT 1), c.relname::pg_catalog.text) AS remote,
              (SELECT pg_catalog.substr(o, 13) FROM pg_catalog.unnest(ft.ftoptions) AS o WHERE o OPERATOR(pg_catalog.~~) 'schema\\_name=%' LIMIT 1) AS remote_schema
         FROM pg_catalog.pg_foreign_table ft JOIN pg_catalog.pg_foreign_server fs ON fs.oid OPERATOR(pg_catalog.=) ft.ftserver
         JOIN pg_catalog.pg_foreign_data_wrapper w ON w.oid OPERATOR(pg_catalog.=) fs.srvfdw
        WHERE ft.ftrelid OPERATOR(pg_catalog.=) c.oid) AS s
    WHERE r.kind OPERATOR(pg_catalog.=) 'r' AND c.relkind OPERATOR(pg_catalog.=) 'f'
      AND (s.fdwname OPERATOR(pg_catalog.<>) 'postgres_fdw' OR pg_catalog.lower(s.remote) OPERATOR(pg_catalog.=) ANY (ARRAY[${REFUSED}, ${SECRETS}]::pg_catalog.text[])
           OR s.remote_schema OPERATOR(pg_catalog.=) ANY ('{pg_catalog,information_schema}'::pg_catalog.text[]))
    LIMIT 1),
  (SELECT pg_catalog.concat('R ', r.root, ' reads ', x.w)
     FROM reach r JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) r.oid
     CROSS JOIN LATERAL pg_catalog.unnest(${BODY_WORDS}) AS x(w)
    WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND NOT p.prosecdef AND ${TEXT_LANGUAGE}
      AND pg_catalog.lower(x.w) OPERATOR(pg_catalog.=) ANY (ARRAY[${REFUSED}, ${SECRETS}]::pg_catalog.text[])
    LIMIT 1),
  (SELECT pg_catalog.concat('E ', r.root, ' reads ', x.w, ' of ',
                            (SELECT ${TOAST_OWNER('t.oid')} FROM pg_catalog.pg_class t
                              WHERE t.relname OPERATOR(pg_catalog.=) pg_catalog.name(x.w) AND t.relkind OPERATOR(pg_catalog.=) 't' LIMIT 1))
     FROM reach r JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) r.oid
     CROSS JOIN LATERAL pg_catalog.unnest(${BODY_WORDS}) AS x(w)
    WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND NOT p.prosecdef AND ${TEXT_LANGUAGE}
      AND x.w OPERATOR(pg_catalog.~) '${PG_STORAGE_NAME.source}'
    ORDER BY x.w OPERATOR(pg_catalog.~) '^pg_toast(_temp_[0-9]+)?$'
    LIMIT 1),
  (SELECT pg_catalog.concat('D ', r.root, ' calls ', p.proname, '()')
     FROM reach r JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) r.oid
    WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND p.prosecdef AND NOT ${exempt}
    LIMIT 1))`;
}

const STATISTICS_FUNCTIONS = quoted(PG_EXECUTOR_STATISTICS);

/** age(xid): the next transaction id minus its argument, a counter of every session's writes; age(timestamp) shares its name, so it is judged by OID. */
export const AGE_OF_XID = `'pg_catalog.age(pg_catalog.xid)'::pg_catalog.regprocedure`;

/** The words a transaction id comes from (executor-statistics.ts): beside `age` in a text body, age(xid) is taken as called. */
const TRANSACTION_ID_WORDS = quoted([...TRANSACTION_ID_SOURCES]);
const STATISTICS_VIEWS = quoted(Object.keys(PG_EXECUTOR_STATISTICS_VIEWS));

/**
 * Where rows are separated: what the walk found of the executor's statistics (executor-statistics.ts),
 * as `S <root> reads|calls <what>`, or NULL. A view initdb or an extension made over them
 * (pg_stat_user_tables); a statistics function (or age(xid), AGE_OF_XID) a view's rules or a BEGIN
 * ATOMIC body call by OID (pg_depend records nothing on what initdb pins, so the stored trees are read); an extension's
 * statistics function the walk reached (pgstattuple); one named as a word in a SQL or PL/pgSQL
 * text body; and, in such a body, the word age beside a transaction id source (coarse, as the
 * statement check's rule: the text is not parsed).
 */
export function statisticsFinding(): string {
  return `COALESCE(
  (SELECT pg_catalog.concat('S ', r.root, ' reads ', c.relname)
     FROM reach r JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) r.oid
    WHERE r.kind OPERATOR(pg_catalog.=) 'r' AND c.relname OPERATOR(pg_catalog.=) ANY (ARRAY[${STATISTICS_VIEWS}]::pg_catalog.name[])
      AND (c.oid OPERATOR(pg_catalog.<) ${FIRST_NORMAL_OID}
           OR EXISTS (SELECT FROM pg_catalog.pg_depend d
                       WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                         AND d.objid OPERATOR(pg_catalog.=) c.oid AND d.deptype OPERATOR(pg_catalog.=) 'e'))
    LIMIT 1),
  (SELECT pg_catalog.concat('S ', r.root, ' calls ', p.proname, '()')
     FROM reach r CROSS JOIN LATERAL (${STORED_TREES}) AS t
     CROSS JOIN LATERAL pg_catalog.regexp_matches(t.tree, ':(?:funcid|opfuncid|aggfnoid|winfnoid) (\\d+)', 'g') AS m
     JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) pg_catalog.oidin(pg_catalog.textout(m[1]))
    WHERE r.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND (p.proname OPERATOR(pg_catalog.=) ANY (ARRAY[${STATISTICS_FUNCTIONS}]::pg_catalog.name[]) OR p.oid OPERATOR(pg_catalog.=) ${AGE_OF_XID})
    LIMIT 1),
  (SELECT pg_catalog.concat('S ', r.root, ' calls ', p.proname, '()')
     FROM reach r JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) r.oid
    WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND p.proname OPERATOR(pg_catalog.=) ANY (ARRAY[${STATISTICS_FUNCTIONS}]::pg_catalog.name[])
    LIMIT 1),
  (SELECT pg_catalog.concat('S ', r.root, ' calls ', x.w)
     FROM reach r JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) r.oid
     CROSS JOIN LATERAL pg_catalog.unnest(${BODY_WORDS}) AS x(w)
    WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND NOT p.prosecdef AND ${TEXT_LANGUAGE}
      AND pg_catalog.lower(x.w) OPERATOR(pg_catalog.=) ANY (ARRAY[${STATISTICS_FUNCTIONS}, ${STATISTICS_VIEWS}]::pg_catalog.text[])
    LIMIT 1),
  (SELECT pg_catalog.concat('S ', r.root, ' calls age()')
     FROM reach r JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) r.oid
    WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND NOT p.prosecdef AND ${TEXT_LANGUAGE}
      AND EXISTS (SELECT FROM pg_catalog.unnest(${BODY_WORDS}) AS x(w) WHERE pg_catalog.lower(x.w) OPERATOR(pg_catalog.=) 'age')
      AND EXISTS (SELECT FROM pg_catalog.unnest(${BODY_WORDS}) AS x(w) WHERE pg_catalog.lower(x.w) OPERATOR(pg_catalog.=) ANY (ARRAY[${TRANSACTION_ID_WORDS}]::pg_catalog.text[]))
    LIMIT 1))`;
}

/**
 * The judgement of a built-in function a person's object calls: the statement check's own rule
 * for a function named as one an object calls (functionReferenceObjection), with the connection's
 * mode: on a read-only connection what only a writable one runs is refused too (a read-only
 * transaction does not stop txid_current, gin_clean_pending_list or brin_summarize_new_values).
 * So a view or function a person created cannot run for the agent what the agent could not call
 * itself (pg_terminate_backend, pg_stat_reset, pg_reload_conf, set_config, dblink, advisory locks, ...).
 */
export function builtinObjection(name: string, allowWrite = true): Objection | undefined {
  return functionReferenceObjection(name.toLowerCase(), postgresReferencedFunction, allowWrite);
}

/** Every built-in function name the classified server has, as the generated lists hold them, and the writes the token rules deny by name (txid_current). */
function builtinNames(): string[] {
  const names = new Set<string>(['set_config', ...SEQUENCE_WRITE_NAMES]);
  for (const value of Object.values(generated)) {
    // Type names, not functions'.
    if (value === generated.PG_BUILTIN_TYPES) continue;
    if (Array.isArray(value)) {
      for (const n of value) if (typeof n === 'string') names.add(n);
    } else if (value && typeof value === 'object') {
      for (const n of Object.keys(value)) names.add(n);
    }
  }
  return [...names].filter((n) => /^[a-z_][a-z0-9_$]*$/.test(n));
}

/** The built-in function names builtinObjection refuses on a writable connection, and on a read-only one (bound as refusedBuiltinNames). */
const REFUSED_BUILTIN_NAMES = builtinNames()
  .filter((n) => builtinObjection(n) !== undefined)
  .sort();
const READ_ONLY_REFUSED_BUILTIN_NAMES = builtinNames()
  .filter((n) => builtinObjection(n, false) !== undefined)
  .sort();
const REFUSED_SET: ReadonlySet<string> = new Set(REFUSED_BUILTIN_NAMES);
const READ_ONLY_REFUSED_SET: ReadonlySet<string> = new Set(READ_ONLY_REFUSED_BUILTIN_NAMES);

/** True when refusedBuiltinFinding refuses the function `name` (as folded) on a connection of this mode. */
export const isRefusedBuiltin = (name: string, readOnly: boolean): boolean => (readOnly ? READ_ONLY_REFUSED_SET : REFUSED_SET).has(name);

/** The walk's bound list of refused built-ins ($8, refusedBuiltinNames), as text to compare names and words with. */
const REFUSED_BUILTINS = '$8::pg_catalog.text[]';

/**
 * What the walk found of a built-in function the policy refuses (builtinObjection, with the
 * connection's mode: the list bound as $8), called by an
 * object created since initdb, as `B <root> calls <name>()`, or NULL: by OID in a view's rules or
 * a BEGIN ATOMIC body (pg_depend records nothing on what initdb pins, so the stored trees are
 * read), an extension's function the walk reached from another object (dblink_exec; one the
 * statement calls by name itself is the statement check's to judge, with its arguments:
 * crosstab with plain SQL text), or named as a word in a SQL or PL/pgSQL text body; and a name
 * the statement writes after a dot ($3) that attribute notation would call as such a function,
 * built-in or an extension's (`(x).pg_terminate_backend`), as `B .<name> calls <name>()`.
 */
export function refusedBuiltinFinding(): string {
  return `COALESCE(
  (SELECT pg_catalog.concat('B ', r.root, ' calls ', p.proname, '()')
     FROM reach r CROSS JOIN LATERAL (${STORED_TREES}) AS t
     CROSS JOIN LATERAL pg_catalog.regexp_matches(t.tree, ':(?:funcid|opfuncid|aggfnoid|winfnoid) (\\d+)', 'g') AS m
     JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) pg_catalog.oidin(pg_catalog.textout(m[1]))
    WHERE r.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND pg_catalog.array_position(${REFUSED_BUILTINS}, p.proname::pg_catalog.text) IS NOT NULL
    LIMIT 1),
  (SELECT pg_catalog.concat('B ', r.root, ' calls ', p.proname, '()')
     FROM reach r JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) r.oid
    WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND pg_catalog.array_position(${REFUSED_BUILTINS}, p.proname::pg_catalog.text) IS NOT NULL
      AND r.root OPERATOR(pg_catalog.<>) pg_catalog.concat(p.proname, '()')
    LIMIT 1),
  (SELECT pg_catalog.concat('B ', r.root, ' calls ', x.w, '()')
     FROM reach r JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) r.oid
     CROSS JOIN LATERAL pg_catalog.unnest(${BODY_WORDS}) AS x(w)
    WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND NOT p.prosecdef AND ${TEXT_LANGUAGE}
      AND pg_catalog.array_position(${REFUSED_BUILTINS}, pg_catalog.lower(x.w)) IS NOT NULL
    LIMIT 1),
  (SELECT pg_catalog.concat('B .', p.proname, ' calls ', p.proname, '()')
     FROM pg_catalog.pg_proc p
    WHERE p.proname OPERATOR(pg_catalog.=) ANY ($3::pg_catalog.name[]) AND ${ONE_ARGUMENT}
      AND pg_catalog.array_position(${REFUSED_BUILTINS}, p.proname::pg_catalog.text) IS NOT NULL
    LIMIT 1))`;
}

/**
 * True when a SQL or PL/pgSQL body (pg_proc p) may run SQL text that is only known when it runs:
 * PL/pgSQL's EXECUTE in any form (EXECUTE, RETURN QUERY EXECUTE, FOR ... IN EXECUTE, OPEN ... FOR
 * EXECUTE), SQL's EXECUTE of a prepared statement, or a DO block (its code is a string, which the
 * body's words do not show as code): the keyword as a token, not inside a comment, a string or a
 * quoted name; DO followed by NOTHING or UPDATE is ON CONFLICT's. A body that holds neither word
 * is never tokenised; one TOKEN cannot read is judged by its words alone (any EXECUTE or DO counts).
 */
const RUNS_TEXT = `p.prosrc OPERATOR(pg_catalog.~*) 'execute|do\\M'
      AND (p.prosrc OPERATOR(pg_catalog.~) ${DOLLAR_QUOTE}
           OR EXISTS (SELECT FROM pg_catalog.regexp_matches(p.prosrc, ${TOKEN}, 'g') AS t(m) WHERE ${UNREADABLE_TOKEN})
           OR EXISTS (SELECT FROM (SELECT pg_catalog.lower(t.m[1]) AS word, pg_catalog.lead(pg_catalog.lower(t.m[1])) OVER (ORDER BY t.n) AS next
                                     FROM pg_catalog.regexp_matches(p.prosrc, ${TOKEN}, 'g') WITH ORDINALITY AS t(m, n)
                                    WHERE t.m[1] OPERATOR(pg_catalog.!~) '^(\\s|--|/\\*)') AS k
                       WHERE k.word OPERATOR(pg_catalog.=) 'execute'
                          OR (k.word OPERATOR(pg_catalog.=) 'do' AND (k.next IS NULL OR k.next OPERATOR(pg_catalog.<>) ALL ('{nothing,update}'::pg_catalog.text[])))))`;

/**
 * True when a SQL or PL/pgSQL text body (pg_proc p) may change, as a statement of its own, the role
 * the call runs as or a context value: `SET [LOCAL | SESSION] ROLE`, `SET [LOCAL | SESSION] SESSION
 * AUTHORIZATION`, `SET role|session_authorization|mcp.* TO|= ...` (names quoted or not), `RESET role`
 * and the like (gram.y's VariableSetStmt and VariableResetStmt; PL/pgSQL hands them to the server
 * as SQL statements, and a SQL function runs them as its own statements). A statement starts the
 * body or follows `;`, BEGIN, THEN, ELSE, LOOP or a label's `>>`; the setting is one of the next
 * three tokens past SET or RESET. A body TOKEN cannot read for certain (a dollar quote, an
 * unreadable token) is judged by its words alone: any SET or RESET beside one of those names.
 */
const SETS_ROLE = `(p.prosrc OPERATOR(pg_catalog.~) ${DOLLAR_QUOTE}
           OR EXISTS (SELECT FROM pg_catalog.regexp_matches(p.prosrc, ${TOKEN}, 'g') AS t(m) WHERE ${UNREADABLE_TOKEN}))
      OR EXISTS (SELECT FROM (SELECT k.w, pg_catalog.lag(k.w) OVER (ORDER BY k.n) AS prev, pg_catalog.lead(k.w) OVER (ORDER BY k.n) AS a,
                                     pg_catalog.lead(k.w, 2) OVER (ORDER BY k.n) AS b, pg_catalog.lead(k.w, 3) OVER (ORDER BY k.n) AS c
                                FROM (SELECT CASE WHEN t.m[1] OPERATOR(pg_catalog.~~) '"%'
                                                  THEN pg_catalog.replace(pg_catalog.substr(t.m[1], 2, GREATEST(pg_catalog.length(t.m[1]) OPERATOR(pg_catalog.-) 2, 0)), '""', '"')
                                                  ELSE pg_catalog.lower(t.m[1]) END AS w, t.n
                                        FROM pg_catalog.regexp_matches(p.prosrc, ${TOKEN}, 'g') WITH ORDINALITY AS t(m, n)
                                       WHERE t.m[1] OPERATOR(pg_catalog.!~) '^(\\s|--|/\\*)') AS k) AS q
                  WHERE q.w OPERATOR(pg_catalog.=) ANY ('{set,reset}'::pg_catalog.text[])
                    AND (q.prev IS NULL OR q.prev OPERATOR(pg_catalog.=) ANY ('{;,begin,then,else,loop,>}'::pg_catalog.text[]))
                    AND EXISTS (SELECT FROM (VALUES (q.a), (q.b), (q.c)) AS v(w)
                                 WHERE v.w OPERATOR(pg_catalog.=) ANY ('{role,session_authorization,authorization}'::pg_catalog.text[])
                                    OR v.w OPERATOR(pg_catalog.~) '^mcp(\\.|$)'))`;

/**
 * The settings a function's SET clauses (pg_proc.proconfig) may give it and still be judged as
 * the call: where its body's names resolve (search_path: the walk maps a text body's words to
 * relations and functions of every schema, so the path changes nothing it relies on), how values
 * are shown and read, and planner and memory tuning. Any other setting is refused (configFinding):
 * `role` and `session_authorization` run the body with another role's rights, `row_security`
 * and a context parameter (`mcp.customer_id`) change which rows it sees, and the rest are what
 * the statement check refuses as a session change.
 */
const CONFIG_KEPT = `'{search_path,datestyle,intervalstyle,timezone,extra_float_digits,bytea_output,client_min_messages,
  lc_monetary,lc_numeric,lc_time,work_mem,hash_mem_multiplier,maintenance_work_mem,jit,plan_cache_mode,
  from_collapse_limit,join_collapse_limit,random_page_cost,seq_page_cost,cpu_tuple_cost,cpu_index_tuple_cost,
  cpu_operator_cost,effective_cache_size,plpgsql.variable_conflict,plpgsql.print_strict_params,plpgsql.extra_warnings,
  plpgsql.extra_errors}'::pg_catalog.text[]`.replace(/\s+/g, '');

/**
 * A reached function whose SET clauses give it a setting CONFIG_KEPT does not hold, as
 * `C <setting> <root> calls <name>()`, or NULL: `SET role = x` runs the body with x's rights for
 * any caller that is a member of x, past hanactl's refusal of SET ROLE. Refused on every
 * connection, whoever made the function.
 */
export function configFinding(): string {
  return `(SELECT pg_catalog.concat('C ', s.name, ' ', r.root, ' calls ', p.proname, '()')
     FROM reach r JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) r.oid
     CROSS JOIN LATERAL pg_catalog.unnest(p.proconfig) AS g(setting)
     CROSS JOIN LATERAL (SELECT pg_catalog.lower(pg_catalog.split_part(g.setting, '=', 1)) AS name) AS s
    WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND p.proconfig IS NOT NULL
      AND pg_catalog.array_position(${CONFIG_KEPT}, s.name) IS NULL AND s.name OPERATOR(pg_catalog.!~~) 'enable\\_%'
    LIMIT 1)`;
}

/**
 * A relation handed to table_to_xml or its family (READS_BY_NAME) that no constant names, as
 * `Q <root> calls <name>`: the relation is chosen only when the statement runs, so the walk cannot
 * follow what it reads (namedByConstant follows constants only).
 */
const HANDS_RELATION = treeOrBodyFinding({
  letter: 'Q',
  // A first argument that is no regclass constant (handsRelationAtRunTime).
  treeCondition: handsRelationAtRunTime('t.tree'),
  // Only a body that names such a function, or writes a Unicode-escaped name that may be one, is read for how it calls it.
  bodyFilter: `p.prosrc OPERATOR(pg_catalog.~*) 'table_to_xml|u&[''"]'`,
  // A call whose first argument is not one plain string literal, or a name without a call the text shows (textHandsRelationAtRunTime).
  bodyCondition: textHandsRelationAtRunTime('p.prosrc'),
});

/**
 * A type-dispatching function (array_in, domain_in, ...) handed a type that runs a person's code,
 * as `T <dispatcher> <root> calls <name>`: the dispatcher runs the own code of the type it is given
 * by OID (its input function, a domain's CHECK constraints, a range's canonical function), which
 * the tree or body does not name, so the walk cannot follow it.
 */
const DISPATCHES_TYPE = treeOrBodyFinding({
  letter: 'T',
  word: {
    tree: 'd.proname',
    // The dispatcher the body names: as a plain word, else by a Unicode-escaped name.
    body: `COALESCE(pg_catalog.lower((pg_catalog.regexp_match(p.prosrc, ${DISPATCHER_WORD}, 'i'))[1]),
         (SELECT pg_catalog.lower(u.text) FROM (${unicodeEscapes('p.prosrc', TOKEN)}) AS u
           WHERE NOT u.string AND pg_catalog.lower(u.text) OPERATOR(pg_catalog.=) ANY (ARRAY[${DISPATCHERS}]::pg_catalog.text[]) LIMIT 1))`,
  },
  treeRows: dispatchedIn('t.tree'),
  // An OID chosen when it runs (no constant: d.m NULL), or a constant one of a type created since
  // initdb: a built-in type runs only built-in code. Following a person's type from here, inside
  // the recursion, made the walk of an ordinary view take seconds; a regtype constant is followed
  // through pg_depend instead.
  treeCondition: `(d.m IS NULL OR ${DISPATCHED_OID} OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID})`,
  // Only a body that names a dispatcher, or writes a Unicode-escaped name that may be one, is read for how it calls it.
  bodyFilter: `(p.prosrc OPERATOR(pg_catalog.~*) ${DISPATCHER_WORD} OR p.prosrc OPERATOR(pg_catalog.~*) 'u&[''"]')`,
  // A call whose OID is no constant, or a name without a call the text shows (textDispatchesAtRunTime);
  // a body's numbers are followed as types through its words.
  bodyCondition: textDispatchesAtRunTime('p.prosrc'),
});

/**
 * What the walk reached whose code it cannot judge before it runs, as `X <root> calls <name>()`
 * (a SQL or PL/pgSQL function that runs SQL text: RUNS_TEXT), `K <root> calls <name>()` (a SQL or
 * PL/pgSQL function whose body sets the role, the session's authorization or a context value as
 * a statement of its own: SETS_ROLE; a function's SET clause is configFinding's), `U <root> calls <name>()` (a SQL or
 * PL/pgSQL function whose Unicode-escaped names the walk cannot read for certain: UNREADABLE_NAMES)
 * or `L <language> <root> calls <name>()` (a function in a language whose body the walk does not
 * read: PL/Perl, PL/Python, PL/Tcl, PL/v8, C), `Q <root> calls <name>` (HANDS_RELATION) or
 * `T <dispatcher> <root> calls <name>` (DISPATCHES_TYPE), or NULL. Only functions created since initdb; an extension's own functions in
 * C are judged by name, as the built-ins are (refusedBuiltinFinding), and its SQL or PL/pgSQL ones
 * as any other. Refused on every connection: such a function runs what it is handed (`EXECUTE q`),
 * and what that text reaches no check judges.
 */
export function runtimeCodeFinding(): string {
  return `COALESCE(
  ${HANDS_RELATION},
  (SELECT pg_catalog.concat('U ', r.root, ' calls ', p.proname, '()')
     FROM reach r JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) r.oid
    WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND p.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND ${TEXT_LANGUAGE}
      AND p.prosqlbody IS NULL AND CASE WHEN ${UNREADABLE_NAMES} THEN true ELSE false END
    LIMIT 1),
  (SELECT pg_catalog.concat('K ', r.root, ' calls ', p.proname, '()')
     FROM reach r JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) r.oid
    WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND p.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND ${TEXT_LANGUAGE}
      AND p.prosqlbody IS NULL AND p.prosrc OPERATOR(pg_catalog.~*) '\\m(set|reset)\\M' AND p.prosrc OPERATOR(pg_catalog.~*) '\\m(role|authorization|session_authorization|mcp)\\M'
      AND CASE WHEN ${SETS_ROLE} THEN true ELSE false END
    LIMIT 1),
  ${DISPATCHES_TYPE},
  (SELECT pg_catalog.concat('X ', r.root, ' calls ', p.proname, '()')
     FROM reach r JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) r.oid
    WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND p.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND ${TEXT_LANGUAGE}
      AND CASE WHEN ${RUNS_TEXT} THEN true ELSE false END
    LIMIT 1),
  (SELECT pg_catalog.concat('L ', l.lanname, ' ', r.root, ' calls ', p.proname, '()')
     FROM reach r JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) r.oid
     JOIN pg_catalog.pg_language l ON l.oid OPERATOR(pg_catalog.=) p.prolang
    WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND p.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID}
      AND l.lanname OPERATOR(pg_catalog.<>) ALL ('{sql,plpgsql,internal}'::pg_catalog.name[])
      AND NOT EXISTS (SELECT FROM pg_catalog.pg_depend d
                       WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
                         AND d.objid OPERATOR(pg_catalog.=) p.oid AND d.deptype OPERATOR(pg_catalog.=) 'e')
    LIMIT 1))`;
}

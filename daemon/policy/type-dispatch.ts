import { objection } from './objections.js';
import { PG_BUILTIN_TYPES, PG_RUNS_TYPE_CODE } from './pg-functions.generated.js';
import type { ConstantArgument, ParsedCall } from './pg-parser.js';
import type { Objection } from './types.js';

// PostgreSQL's built-in functions that take a type's OID and run that type's own code, classified
// from pg_proc and the server's source (scripts/policy/pg-functions.mjs): array_in, record_in,
// domain_in, range_in, multirange_in and their recv forms call the input function of the element,
// field, base or subtype, a domain's CHECK constraints and a range's canonical function. (The
// built-ins that run a relation's own code, satisfies_hash_partition among them, are relation-code.ts's.)
// The resolve step walks only what a statement names, so a type chosen at run time would run a
// person's code nobody judged: such a call is answered only when the OID is a constant naming a
// built-in type (FirstNormalObjectId, 16384, bounds what initdb made).

const TYPE_CODE: ReadonlyMap<string, readonly number[]> = new Map(Object.entries(PG_RUNS_TYPE_CODE));
const BUILTIN_TYPES: ReadonlySet<string> = new Set(PG_BUILTIN_TYPES);

/** PostgreSQL's FirstNormalObjectId: every object initdb makes has a lower OID. */
const FIRST_NORMAL_OID = 16384;

/** The SQL-standard spellings the type grammar reads as built-in types (gram.y SimpleTypename), normalised as builtinTypeName does. */
const SQL_TYPE_NAMES: ReadonlySet<string> = new Set([
  'int',
  'integer',
  'smallint',
  'bigint',
  'real',
  'float',
  'double precision',
  'decimal',
  'dec',
  'boolean',
  'character',
  'char',
  'character varying',
  'char varying',
  'national character',
  'national character varying',
  'nchar',
  'nchar varying',
  'bit varying',
  'time with time zone',
  'time without time zone',
  'timestamp with time zone',
  'timestamp without time zone',
]);

/** Casts a constant OID may pass through and stay the same value, as the parser names them (bare or pg_catalog-qualified). */
const OID_CASTS: ReadonlySet<string> = new Set(['oid', 'regtype', 'regclass', 'int2', 'int4', 'int8']);

const castName = (name: string): string | undefined => {
  const parts = name.split('.');
  if (parts.length > 2 || (parts.length === 2 && parts[0] !== 'pg_catalog')) return undefined;
  return parts.at(-1);
};

/**
 * The name regtype input would read `text` as, when it is plainly a built-in type's (a name or an
 * SQL spelling of one, maybe `pg_catalog.`-qualified, with a type modifier or array brackets);
 * undefined for anything else (a quoted name, another schema, a person's type).
 */
function builtinTypeName(text: string): string | undefined {
  if (/["\\]/.test(text)) return undefined;
  const name = text
    .toLowerCase()
    .replace(/(\s*\[\s*\d*\s*\])+\s*$/, '')
    .replace(/\s*\([\s\d,]*\)/, '')
    .replace(/^\s*pg_catalog\s*\.\s*/, '')
    .replace(/\s+/g, ' ')
    .trim();
  if (SQL_TYPE_NAMES.has(name)) return name;
  const base = name.startsWith('_') ? name.slice(1) : name;
  return BUILTIN_TYPES.has(base) ? name : undefined;
}

type Reading = { readonly kind: 'runtime' } | { readonly kind: 'builtin'; readonly type?: string } | { readonly kind: 'person' };

/** What the constant argument `c` of a dispatcher names. */
function readConstant(c: ConstantArgument | undefined): Reading {
  if (!c) return { kind: 'runtime' };
  const casts = c.casts.map(castName);
  if (casts.some((name) => name === undefined || !OID_CASTS.has(name))) return { kind: 'runtime' };
  if (c.number || /^\s*\d+\s*$/.test(c.value)) {
    const oid = Number(c.value);
    return Number.isInteger(oid) && oid >= 0 && oid < FIRST_NORMAL_OID ? { kind: 'builtin' } : { kind: 'person' };
  }
  // A name: read by the first cast's input function (an unknown literal handed to an oid argument is read as digits only).
  const first = casts[0];
  if (first !== 'regtype') return { kind: 'person' };
  const type = builtinTypeName(c.value);
  return type ? { kind: 'builtin', type } : { kind: 'person' };
}

/**
 * The refusal for `call` when it is a function that runs the own code of the type an argument
 * gives by OID, and that argument is not a constant naming a built-in one; undefined otherwise
 * (any other function, or a built-in type given as a constant).
 */
export function typeCodeObjection(call: ParsedCall): Objection | undefined {
  const positions = TYPE_CODE.get(call.name);
  if (!positions) return undefined;
  const what =
    "the type whose OID its argument gives (the type's input function, a domain's CHECK constraints, a range's canonical function)";
  const hint =
    "Cast the text to the type instead ('{1,2}'::schema.type[]), which names it so that its code is checked, or give a built-in type as a constant ('int4'::regtype).";
  for (const position of positions) {
    if (position >= call.argCount) continue;
    const reading = readConstant(call.constantArgs[position]);
    if (reading.kind === 'runtime') {
      return objection(
        'dynamic-sql',
        `Refused: ${call.name}() runs the own code of ${what}, and here that type is chosen only when the statement runs (an expression, a column's value or a parameter rather than a constant), so what it runs cannot be checked before it runs.`,
        hint,
      );
    }
    if (reading.kind === 'person') {
      return objection(
        'denied-function',
        `Refused: ${call.name}() runs the own code of ${what}, and the type it is given is not one PostgreSQL itself made (or cannot be told apart from one here), whose code this check does not judge through ${call.name}().`,
        hint,
      );
    }
  }
  return undefined;
}

/** The built-in type names that `call`'s constant type arguments give by name ('int4'::regtype), for the resolve step to walk. */
export function dispatchedTypeNames(call: ParsedCall): string[] {
  const out: string[] = [];
  for (const position of TYPE_CODE.get(call.name) ?? []) {
    const reading = readConstant(call.constantArgs[position]);
    if (reading.kind === 'builtin' && reading.type) out.push(reading.type.replace(/^_/, ''));
  }
  return out;
}

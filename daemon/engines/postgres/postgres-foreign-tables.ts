import { HanactlError } from '../../../shared/errors.js';

/**
 * Foreign tables on a read-only connection and where rows are separated. A foreign table's rows
 * come from outside what the walk sees: postgres_fdw runs the remote server's views, functions
 * and rules (a loopback server to the same database runs them here, in a remote transaction that
 * is not read-only, so pg_stat_reset_single_table_counters in a remote view runs, and a remote
 * view over pg_authid returns its hashes under an ordinary remote name); file_fdw reads a file on
 * the database host or runs a program there; any other wrapper does what its code does. So,
 * where the connection is read-only or rows are separated, reaching a foreign table (relkind
 * `f`: named, through a view or a function's body, or as a partition of a partitioned table the
 * walk follows) is refused, naming its server and wrapper. On a writable connection without
 * separation the walk judges a postgres_fdw table by its remote name and refuses other wrappers
 * (reachFinding).
 */

/**
 * A reached foreign table, as `W <mode> <server> <wrapper> <root> reads <name>` (mode `s` where
 * rows are separated, else `r`: the connection is read-only; server and wrapper each as
 * quote_ident gives them), or NULL.
 */
export function foreignTableFinding(separated: boolean): string {
  return `(SELECT pg_catalog.concat('W ${separated ? 's' : 'r'} ', pg_catalog.quote_ident(fs.srvname::pg_catalog.text), ' ', pg_catalog.quote_ident(w.fdwname::pg_catalog.text), ' ', r.root, ' reads ', c.relname)
     FROM reach r JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) r.oid
     JOIN pg_catalog.pg_foreign_table ft ON ft.ftrelid OPERATOR(pg_catalog.=) c.oid
     JOIN pg_catalog.pg_foreign_server fs ON fs.oid OPERATOR(pg_catalog.=) ft.ftserver
     JOIN pg_catalog.pg_foreign_data_wrapper w ON w.oid OPERATOR(pg_catalog.=) fs.srvfdw
    WHERE r.kind OPERATOR(pg_catalog.=) ANY ('{r,w}'::pg_catalog.text[]) AND c.relkind OPERATOR(pg_catalog.=) 'f'
    LIMIT 1)`;
}

/** One name as quote_ident writes it, at the start of `text`. */
const NAME = /^("(?:[^"]|"")*"|[^ "]+) /;

const unquote = (name: string): string => (name.startsWith('"') ? name.slice(1, -1).replaceAll('""', '"') : name);

/** The refusal for `what`, a foreign table finding after its letter: `<mode> <server> <wrapper> <root> reads <name>`. */
export function foreignTableRefusal(what: string): HanactlError | undefined {
  const separated = what.startsWith('s ');
  const server = NAME.exec(what.slice(2));
  if (!server) return undefined;
  const rest = what.slice(2 + server[0].length);
  const wrapper = NAME.exec(rest);
  if (!wrapper) return undefined;
  const found = /^(.*) reads (.+)$/s.exec(rest.slice(wrapper[0].length));
  if (!found) return undefined;
  const [, root, table] = found as unknown as [string, string, string];
  const named = root === table || root.endsWith(`.${table}`) || root.endsWith(`."${table}"`);
  const through = named ? `Refused: ${root} is` : `Refused: ${root} reads`;
  const mode = separated ? 'rows are separated on this connection' : 'this connection is read-only';
  return new HanactlError(
    'STATEMENT_REFUSED',
    `${through} the foreign table ${table} (server ${unquote(server[1] as string)}, foreign-data wrapper ${unquote(wrapper[1] as string)}), whose rows come from outside this database: the wrapper runs what the remote end holds (postgres_fdw runs the remote server's views and functions in a transaction that is not read-only; file_fdw reads a file or runs a program on the database host), which hanactl cannot check, and ${mode}.`,
    {
      rule: 'foreign-table',
      hint: 'Select from ordinary tables, or ask a person to read the foreign table in a database client.',
    },
  );
}

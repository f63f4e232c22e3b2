/**
 * The promise of one folder per engine: adding an engine is a folder under daemon/engines/, a row
 * in daemon/engines/index.ts and an entry in shared/engines.ts. It holds only while no other
 * source file branches on an engine's name, so this test reads every source file outside the
 * engine folders and refuses a string literal that is an engine's name or URL scheme
 * (`engine === 'mysql'`, `case 'sqlite':`, a `Record` keyed by engine, a literal type).
 * What differs between engines belongs in the engine's folder (read through the table) or its
 * entry in shared/engines.ts. For the same reason only the table imports from an engine folder.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ENGINE_SPECS, ENGINES, type EngineSpec } from '../../../../shared/engines.js';
import { REPO } from '../../../helpers/hanactl-home.js';

/** The source folders of the three programs. */
const ROOTS = ['daemon', 'cli', 'shim', 'shared'];

/** Where naming engines is the point: each engine's folder, and the one list of what clients know of them. */
const ENGINE_HOMES = [...ENGINES.map((engine) => `daemon/engines/${engine}/`), 'shared/engines.ts'];

/**
 * Files that name an engine for a reason of their own, not to branch on the engine. A new engine
 * needs no change in any of them. Each must still name one, or its entry goes.
 */
const ALLOWED: Readonly<Record<string, string>> = {
  // Project bindings: CAP's `cds.requires.db`, VCAP_SERVICES and HANA_* variables name the engines
  // whose bindings they are (SQLite, SAP HANA, PostgreSQL). An engine without such a binding has
  // no entry here; one that gains a binding adds its reader to daemon/projects/.
  'daemon/projects/cap-config.ts': 'CAP db kinds',
  'daemon/projects/cap-source.ts': 'CAP db kinds',
  'daemon/projects/vcap.ts': 'VCAP_SERVICES labels and tags',
  'daemon/projects/env-vars.ts': 'the HANA_* variables',
  'daemon/projects/hana-binding.ts': 'a SAP HANA binding',
  'daemon/projects/postgres-binding.ts': 'a PostgreSQL binding',
  'daemon/projects/sources.ts': 'the SAP HANA named-connection file',
  // `mysql` here is MySQL's system database, whose tables hold password hashes (the MySQL dialect's rule).
  'daemon/policy/credential-reads.ts': "MySQL's system database",
  // `hana` here is a DNS label of SAP HANA Cloud hosts.
  'shared/hana-endpoint.ts': 'a HANA Cloud host label',
};

const NAMES: ReadonlySet<string> = new Set(
  ENGINES.flatMap((engine) => {
    const spec: EngineSpec = ENGINE_SPECS[engine];
    return [engine, ...spec.schemes, ...(spec.aliases ?? [])];
  }),
);

function sourceFiles(dir: string): string[] {
  return readdirSync(join(REPO, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** `line: 'literal'` for each string literal in `path` that is an engine's name or scheme. */
function engineLiterals(path: string): string[] {
  const text = readFileSync(join(REPO, path), 'utf8');
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && NAMES.has(node.text.toLowerCase())) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
      found.push(`${path}:${line + 1}: '${node.text}'`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * The one file besides the table that imports an engine folder: a project's SAP HANA binding
 * builds its options with the HANA client's own rules.
 */
const IMPORTS_ALLOWED: Readonly<Record<string, string>> = {
  'daemon/projects/hana-binding.ts': "the HANA client's connect options",
};

/** The engine folders `path` imports or re-exports from (`daemon/engines/<engine>/`), statically or lazily. */
function engineImports(path: string): string[] {
  const text = readFileSync(join(REPO, path), 'utf8');
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    const specifier =
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)
        ? node.moduleSpecifier.text
        : ts.isCallExpression(node) &&
            node.expression.kind === ts.SyntaxKind.ImportKeyword &&
            ts.isStringLiteral(node.arguments[0] as ts.Node)
          ? (node.arguments[0] as ts.StringLiteral).text
          : undefined;
    if (specifier?.startsWith('.')) {
      const target = posix.join(posix.dirname(path), specifier);
      const engine = ENGINES.find((e) => target.startsWith(`daemon/engines/${e}/`));
      if (engine) found.push(`${path} imports ${target}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const FILES = ROOTS.flatMap(sourceFiles).filter((path) => !ENGINE_HOMES.some((home) => path === home || path.startsWith(home)));

describe('engine names outside the engine folders', () => {
  it('scans the sources of every program', () => {
    expect(FILES).toContain('daemon/policy/check-statement.ts');
    expect(FILES).toContain('shared/connection-url.ts');
    expect(FILES).not.toContain('daemon/engines/sqlite/sqlite-driver.ts');
  });

  it('finds no engine name or URL scheme as a string outside daemon/engines/<engine>/ and shared/engines.ts', () => {
    const found = FILES.filter((path) => !(path in ALLOWED)).flatMap(engineLiterals);
    expect(
      found,
      'Move what differs between engines into the engine folder (read through daemon/engines/index.ts) or its entry in shared/engines.ts',
    ).toEqual([]);
  });

  it('keeps no allowance a file no longer needs', () => {
    const unused = Object.keys(ALLOWED).filter((path) => !FILES.includes(path) || engineLiterals(path).length === 0);
    expect(unused, 'Remove these from ALLOWED').toEqual([]);
    const unusedImports = Object.keys(IMPORTS_ALLOWED).filter((path) => !FILES.includes(path) || engineImports(path).length === 0);
    expect(unusedImports, 'Remove these from IMPORTS_ALLOWED').toEqual([]);
  });

  it('reaches an engine folder only through the table (daemon/engines/index.ts)', () => {
    const found = FILES.filter((path) => path !== 'daemon/engines/index.ts' && !(path in IMPORTS_ALLOWED)).flatMap(engineImports);
    expect(found, 'Read what the engine gives through ENGINE_TABLE, or add it to its row').toEqual([]);
    expect(engineImports('daemon/engines/index.ts')).toContain('daemon/engines/index.ts imports daemon/engines/sqlite/index.js');
  });
});

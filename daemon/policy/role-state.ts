import { objection } from './objections.js';
import { isWord, leadIndex, topLevel } from './tokens.js';
import type { Objection, Token } from './types.js';

/**
 * Where rows are separated by context values (PostgreSQL), statements whose effect outlasts the
 * call and decides as whom, or with what settings, later calls run: a role's or a database's
 * defaults (`ALTER ROLE|USER ... [IN DATABASE ...] SET|RESET`, `ALTER DATABASE ... SET|RESET`,
 * which every new backend of the login applies at start, pg_db_role_setting; `SET role` there
 * makes every later session start as that role), a role's attributes and memberships (`ALTER
 * ROLE|USER|GROUP`, `CREATE ROLE|USER|GROUP`, `GRANT|REVOKE` a role), and who owns an object
 * (`ALTER ... OWNER TO` of any kind, `REASSIGN OWNED`, `CREATE SCHEMA ... AUTHORIZATION` of another
 * role, `CREATE DATABASE ... OWNER`): a view runs its reads with its owner's rights, a SECURITY
 * DEFINER function runs as its owner, so an object handed to a role with wider policies reads
 * as that role for every caller. The grammar (gram.y) forms: AlterRoleSetStmt,
 * AlterDatabaseSetStmt, AlterRoleStmt, CreateRoleStmt, GrantRoleStmt, ReassignOwnedStmt,
 * AlterOwnerStmt, AlterTableStmt's AT_ChangeOwner, CreateSchemaStmt's authrole, CreatedbStmt's
 * `owner` option, and another role's default privileges (AlterDefaultPrivilegesStmt `FOR ROLE`, which
 * a member may set: what that role creates later is granted as it says). Checked by the token rules (roleStateTokenRule) and on PostgreSQL's parse tree
 * (roleStateOfStatement).
 */

/** Role specifications that name the login itself (after hanactl made the role the login's own). */
const SELF = ['CURRENT_USER', 'CURRENT_ROLE', 'SESSION_USER'];

/** The refusal of `label` on a connection whose rows are separated by context values. */
export function roleStateObjection(label: string): Objection {
  return objection(
    'role-state',
    `Refused: ${label} changes which role, rights or settings later calls run with (a role's or database's defaults, a membership, an object's owner), and that outlasts this call and reaches every caller of this connection, whose rows are separated by context values.`,
    'Ask a person to make this change outside hanactl, if it is meant.',
  );
}

/** The statement's label when the token rules read it as a role-state change; else undefined. */
export function roleStateTokenLabel(tokens: readonly Token[]): string | undefined {
  const at = leadIndex(tokens);
  const lead = tokens[at];
  const second = tokens[at + 1];
  if (!isWord(lead)) return undefined;
  const top = topLevel(tokens.slice(at));
  const has = (...words: string[]): boolean => top.some((t) => isWord(t, ...words));
  // `RENAME [COLUMN] owner TO ...` renames a column named owner.
  const ownerTo = top.some((t, k) => isWord(t, 'OWNER') && isWord(top[k + 1], 'TO') && !isWord(top[k - 1], 'RENAME', 'COLUMN'));
  // ALTER DATABASE ... SET TABLESPACE moves it; any other SET or RESET is a default.
  const setting = top.some((t, k) => isWord(t, 'RESET') || (isWord(t, 'SET') && !isWord(top[k + 1], 'TABLESPACE')));
  switch (lead.text) {
    case 'ALTER':
      if (isWord(second, 'ROLE', 'GROUP') || (isWord(second, 'USER') && !isWord(tokens[at + 2], 'MAPPING'))) return `ALTER ${second?.text}`;
      if (isWord(second, 'DATABASE') && setting) return 'ALTER DATABASE ... SET';
      // Another role's default privileges: what it creates later is granted as this says.
      if (isWord(second, 'DEFAULT') && top.some((t, k) => isWord(t, 'FOR') && isWord(top[k + 1], 'ROLE', 'USER')))
        return 'ALTER DEFAULT PRIVILEGES FOR ROLE';
      return ownerTo ? 'ALTER ... OWNER TO' : undefined;
    case 'CREATE':
      if (isWord(second, 'ROLE', 'GROUP') || (isWord(second, 'USER') && !isWord(tokens[at + 2], 'MAPPING')))
        return `CREATE ${second?.text}`;
      if (isWord(second, 'DATABASE') && has('OWNER')) return 'CREATE DATABASE ... OWNER';
      if (isWord(second, 'SCHEMA')) {
        const k = top.findIndex((t) => isWord(t, 'AUTHORIZATION'));
        if (k >= 0 && !isWord(top[k + 1], ...SELF)) return 'CREATE SCHEMA ... AUTHORIZATION';
      }
      return undefined;
    case 'GRANT':
    case 'REVOKE':
      // A privilege on an object names it after ON; a role granted or revoked has no ON.
      return has('ON') ? undefined : `${lead.text} of a role`;
    case 'REASSIGN':
      return 'REASSIGN OWNED';
    default:
      return undefined;
  }
}

/** The token rule: a role-state change refused where rows are separated. */
export function roleStateTokenRule(tokens: readonly Token[]): Objection | undefined {
  const label = roleStateTokenLabel(tokens);
  return label ? roleStateObjection(label) : undefined;
}

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null;

const objectWords = (kind: unknown): string => (typeof kind === 'string' ? kind.replace(/^OBJECT_/, '').replaceAll('_', ' ') : 'object');

/** True for a RoleSpec that names the login itself (CURRENT_USER, CURRENT_ROLE, SESSION_USER). */
const isSelf = (spec: unknown): boolean =>
  isNode(spec) && ['ROLESPEC_CURRENT_USER', 'ROLESPEC_CURRENT_ROLE', 'ROLESPEC_SESSION_USER'].includes(String(spec.roletype));

/** The label of a statement node (`kind`, its `body`) that changes role state, as PostgreSQL's parser reads it; else undefined. */
export function roleStateOfStatement(kind: string, body: Node): string | undefined {
  switch (kind) {
    case 'AlterRoleSetStmt':
      return `ALTER ROLE ... ${isNode(body.setstmt) && String(body.setstmt.kind).startsWith('VAR_RESET') ? 'RESET' : 'SET'}`;
    case 'AlterDatabaseSetStmt':
      return `ALTER DATABASE ... ${isNode(body.setstmt) && String(body.setstmt.kind).startsWith('VAR_RESET') ? 'RESET' : 'SET'}`;
    case 'AlterRoleStmt':
      return 'ALTER ROLE';
    case 'CreateRoleStmt':
      return 'CREATE ROLE';
    case 'GrantRoleStmt':
      return `${body.is_grant === true ? 'GRANT' : 'REVOKE'} of a role`;
    case 'RenameStmt':
      return body.renameType === 'OBJECT_ROLE' ? 'ALTER ROLE ... RENAME' : undefined;
    case 'ReassignOwnedStmt':
      return 'REASSIGN OWNED';
    case 'AlterOwnerStmt':
      return `ALTER ${objectWords(body.objectType)} ... OWNER TO`;
    case 'AlterTableStmt': {
      const cmds = Array.isArray(body.cmds) ? body.cmds : [];
      const owner = cmds.some((c) => isNode(c) && isNode(c.AlterTableCmd) && c.AlterTableCmd.subtype === 'AT_ChangeOwner');
      return owner ? `ALTER ${objectWords(body.objtype)} ... OWNER TO` : undefined;
    }
    case 'AlterDefaultPrivilegesStmt': {
      const options = Array.isArray(body.options) ? body.options : [];
      const roles = options.some((o) => isNode(o) && isNode(o.DefElem) && o.DefElem.defname === 'roles');
      return roles ? 'ALTER DEFAULT PRIVILEGES FOR ROLE' : undefined;
    }
    case 'CreateSchemaStmt':
      return body.authrole !== undefined && !isSelf(body.authrole) ? 'CREATE SCHEMA ... AUTHORIZATION' : undefined;
    case 'CreatedbStmt': {
      const options = Array.isArray(body.options) ? body.options : [];
      const owner = options.some((o) => isNode(o) && isNode(o.DefElem) && o.DefElem.defname === 'owner');
      return owner ? 'CREATE DATABASE ... OWNER' : undefined;
    }
    default:
      return undefined;
  }
}

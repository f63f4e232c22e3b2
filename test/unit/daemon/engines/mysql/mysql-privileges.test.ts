import { describe, expect, it } from 'vitest';
import { MYSQL_PRIVILEGE_PROBE } from '../../../../../daemon/engines/mysql/mysql-privileges.js';

/** A probe row for a login with no other finding. */
const row = (more: Record<string, unknown>) => ({
  global_select: 0,
  mysql_select: 0,
  sets_globals: 0,
  definer_routines: 0,
  hidden_definer_routines: 0,
  hidden_invoker_routines: 0,
  powerful_definer_routines: 0,
  unread_views: 0,
  unread_view_names: null,
  login: "'agent'@'%'",
  ...more,
});

describe('MySQL privilege advice: views the login may select but not read', () => {
  it('asks the server for the views whose definition the login may not read, and their names', () => {
    expect(MYSQL_PRIVILEGE_PROBE.sql).toMatch(/information_schema\.VIEWS v WHERE v\.VIEW_DEFINITION = ''/);
    expect(MYSQL_PRIVILEGE_PROBE.sql).toMatch(/AS unread_view_names/);
  });

  it('names them, says they are refused, and gives the grant', () => {
    const [advice, ...rest] = MYSQL_PRIVILEGE_PROBE.advice(row({ unread_views: 2, unread_view_names: 'shop.a, shop.b' }), '"shop"');
    expect(rest).toEqual([]);
    expect(advice).toMatch(/"shop" may select from 2 views whose definition it may not read \(shop\.a, shop\.b\)/);
    expect(advice).toMatch(/hanactl refuses them on read-only calls and where rows are separated/);
    expect(advice).toMatch(/GRANT SHOW VIEW ON shop\.a TO 'agent'@'%'/);
  });

  it('says how many it leaves unnamed, and nothing when every view is readable', () => {
    const names = 'd.a, d.b, d.c, d.e, d.f';
    const [advice] = MYSQL_PRIVILEGE_PROBE.advice(row({ unread_views: 7, unread_view_names: names }), '"shop"');
    expect(advice).toMatch(/\(d\.a, d\.b, d\.c, d\.e, d\.f, and 2 more\)/);
    const [one] = MYSQL_PRIVILEGE_PROBE.advice(row({ unread_views: 1, unread_view_names: 'd.a' }), '"shop"');
    expect(one).toMatch(/may select from 1 view whose definition it may not read \(d\.a\): what it runs cannot be judged/);
    expect(MYSQL_PRIVILEGE_PROBE.advice(row({}), '"shop"')).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { parseConnectionUrl } from '../../../../shared/connection-url.js';
import { sameLogin } from '../../../../daemon/registry/connection-record.js';

const target = (url: string) => parseConnectionUrl(url).target;

describe('whether two connections may run as one login', () => {
  it('matches one user whatever names the server: host, port, a pooler, a socket', () => {
    const base = target('postgres://agent@127.0.0.1:5432/shop');
    for (const url of [
      'postgres://agent@localhost:5432/shop',
      'postgres://agent@127.0.0.1:16432/shop',
      'postgres://agent@db.example:6543/other',
      'postgres://agent@%2Frun%2Fpostgresql/shop',
    ])
      expect(sameLogin(base, target(url)), url).toBe(true);
    expect(sameLogin(target('mariadb://agent@127.0.0.1:3306/shop'), target('mariadb://agent@localhost:3307/shop?socket=/run/mysqld/mysqld.sock'))).toBe(true);
  });

  it('matches a URL that names no user with any user, which may be the default', () => {
    expect(sameLogin(target('postgres://127.0.0.1/shop'), target('postgres://agent@127.0.0.1/shop'))).toBe(true);
  });

  it('tells other users and other engines apart', () => {
    expect(sameLogin(target('postgres://agent@127.0.0.1/shop'), target('postgres://owner@127.0.0.1/shop'))).toBe(false);
    expect(sameLogin(target('postgres://agent@127.0.0.1/shop'), target('mariadb://agent@127.0.0.1/shop'))).toBe(false);
  });
});

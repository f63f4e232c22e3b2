import mysql from 'mysql2/promise';

/**
 * The account `login` authenticates as from this machine (`CURRENT_USER()`), quoted for a
 * `DEFINER =` clause: `'agent'@'%'`, or `'agent'@'localhost'` where the server resolves host names.
 * The context recipe makes its function with that account as DEFINER, so that the login may read
 * the function's body.
 */
export async function mariadbAccount(url: URL, login: string, password: string): Promise<string> {
  const conn = await mysql.createConnection({ host: url.hostname, port: Number(url.port || 3306), user: login, password });
  try {
    const [rows] = (await conn.query('SELECT CURRENT_USER() AS u')) as unknown as [{ u: string }[]];
    const current = String(rows[0]?.u);
    const at = current.lastIndexOf('@');
    return `'${current.slice(0, at)}'@'${current.slice(at + 1)}'`;
  } finally {
    await conn.end();
  }
}

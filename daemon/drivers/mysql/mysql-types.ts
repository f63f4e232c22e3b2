import type { JsonValue } from '../../../shared/schemas.js';
import { toJsonValue } from '../values.js';
import type { MysqlField } from './mysql-module.js';

const BINARY_CHARSET = 63;
const FLAG_UNSIGNED = 0x20;
const FLAG_ENUM = 0x100;
const FLAG_SET = 0x800;
const LONGLONG = 0x08;

/** Protocol type code to SQL name; strings and blobs split on the charset below. */
const NAMES: Readonly<Record<number, string>> = {
  0: 'DECIMAL',
  1: 'TINYINT',
  2: 'SMALLINT',
  3: 'INT',
  4: 'FLOAT',
  5: 'DOUBLE',
  6: 'NULL',
  7: 'TIMESTAMP',
  8: 'BIGINT',
  9: 'MEDIUMINT',
  10: 'DATE',
  11: 'TIME',
  12: 'DATETIME',
  13: 'YEAR',
  14: 'DATE',
  16: 'BIT',
  242: 'VECTOR',
  245: 'JSON',
  246: 'DECIMAL',
  247: 'ENUM',
  248: 'SET',
  255: 'GEOMETRY',
};

/** [binary name, text name] for the string-ish codes. */
const STRINGS: Readonly<Record<number, readonly [string, string]>> = {
  15: ['VARBINARY', 'VARCHAR'],
  253: ['VARBINARY', 'VARCHAR'],
  254: ['BINARY', 'CHAR'],
  249: ['TINYBLOB', 'TINYTEXT'],
  250: ['MEDIUMBLOB', 'MEDIUMTEXT'],
  251: ['LONGBLOB', 'LONGTEXT'],
  252: ['BLOB', 'TEXT'],
};

const NUMERIC = new Set([0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x08, 0x09, 0xf6]);

/**
 * A readable SQL type name for a result column (`INT`, `BIGINT UNSIGNED`, `DECIMAL`, `VARCHAR`,
 * `DATETIME`, `BLOB`, `JSON`, ...). The protocol sends one code for all BLOB/TEXT sizes except
 * LONG, so sizes are named only when the wire says so.
 */
export function columnTypeName(field: MysqlField): string {
  if (field.extendedFormat === 'json') return 'JSON';
  if (field.extendedTypeName) return field.extendedTypeName.toUpperCase();
  if (field.flags & FLAG_ENUM) return 'ENUM';
  if (field.flags & FLAG_SET) return 'SET';
  const pair = STRINGS[field.columnType];
  if (pair) {
    const binary = field.characterSet === BINARY_CHARSET;
    if (field.columnType === 0xfc && field.columnLength === 0xffffffff) return binary ? 'LONGBLOB' : 'LONGTEXT';
    return binary ? pair[0] : pair[1];
  }
  const name = NAMES[field.columnType] ?? `TYPE_${field.columnType}`;
  return NUMERIC.has(field.columnType) && field.flags & FLAG_UNSIGNED ? `${name} UNSIGNED` : name;
}

/**
 * How one column's cells become JSON. BIGINT arrives as an exact string (`bigNumberStrings`);
 * it goes through BigInt so `toJsonValue` gives a number when it is safe and the exact string
 * beyond 2^53. DECIMAL stays a string; everything else is `toJsonValue` as is.
 */
export function cellReader(field: MysqlField): (value: unknown) => JsonValue {
  if (field.columnType === LONGLONG) {
    return (value) => (typeof value === 'string' && /^-?\d+$/.test(value) ? toJsonValue(BigInt(value)) : toJsonValue(value));
  }
  return (value) => (typeof value === 'string' ? maskCredentials(toJsonValue(value) as string) : toJsonValue(value));
}

/** A mysql_native_password hash: `*` and 40 hex digits. */
const NATIVE_HASH = /\*[0-9A-Fa-f]{40}(?![0-9A-Fa-f])/g;
/** Where an account's authentication starts in SHOW GRANTS / SHOW CREATE USER text. */
const IDENTIFIED = /\bIDENTIFIED\s+(?:BY|VIA|WITH)\b/i;

/**
 * `text` with every single-quoted value (`\x` and `''` inside) as `'***'`; an unclosed one is
 * masked to the end. A scan, not `/'(?:[^'\\]|\\.|'')*'/g`, which is quadratic on a cell an agent's
 * query can build (`'\'` repeated).
 */
function maskQuoted(text: string): string {
  let out = '';
  let copied = 0;
  for (let open = text.indexOf("'"); open >= 0; open = text.indexOf("'", copied)) {
    let at = open + 1;
    while (at < text.length) {
      const ch = text.charAt(at);
      if (ch === '\\') at += 2;
      else if (ch === "'" && text.charAt(at + 1) === "'") at += 2;
      else if (ch === "'") break;
      else at++;
    }
    out += `${text.slice(copied, open)}'***'`;
    copied = Math.min(at + 1, text.length);
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * A second layer behind the statement policy, which refuses SHOW GRANTS and the credential
 * tables: text shaped like a password hash, and every quoted value after `IDENTIFIED BY|VIA|WITH`
 * (`BY PASSWORD '*...'`, `VIA ed25519 USING '...'`, `WITH plugin AS '...'`), is masked before a
 * cell leaves the driver. Linear in the text.
 */
export function maskCredentials(text: string): string {
  let out = text;
  const at = out.search(IDENTIFIED);
  if (at >= 0) out = out.slice(0, at) + maskQuoted(out.slice(at));
  return out.includes('*') ? out.replace(NATIVE_HASH, '*** (password hash hidden)') : out;
}

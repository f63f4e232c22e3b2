import type { JsonValue } from '../../../shared/schemas.js';
import { maskCellValue, maskSecretText } from '../credential-mask.js';
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
 * beyond 2^53. DECIMAL stays a string; everything else is `toJsonValue` with credentials masked
 * (`maskCellValue`), JSON documents included.
 */
export function cellReader(field: MysqlField): (value: unknown) => JsonValue {
  if (field.columnType === LONGLONG) {
    return (value) => (typeof value === 'string' && /^-?\d+$/.test(value) ? toJsonValue(BigInt(value)) : toJsonValue(value));
  }
  return (value) => maskCellValue(toJsonValue(value));
}

/**
 * A second layer behind the statement policy, which refuses SHOW GRANTS and the credential
 * tables: password hashes and passwords written in statement text (`IDENTIFIED BY|VIA|WITH`,
 * `PASSWORD('...')`, `MASTER_PASSWORD='...'`) are masked before a cell leaves the driver.
 * Linear in the text (see `maskSecretText`).
 */
export function maskCredentials(text: string): string {
  return maskSecretText(text);
}

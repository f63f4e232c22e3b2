/** Readable names for the PostgreSQL type OIDs an agent meets most. */
const NAMES: Record<number, string> = {
  16: 'bool',
  17: 'bytea',
  18: 'char',
  19: 'name',
  20: 'int8',
  21: 'int2',
  23: 'int4',
  25: 'text',
  26: 'oid',
  114: 'json',
  142: 'xml',
  700: 'float4',
  701: 'float8',
  1042: 'bpchar',
  1043: 'varchar',
  1082: 'date',
  1083: 'time',
  1114: 'timestamp',
  1184: 'timestamptz',
  1186: 'interval',
  1266: 'timetz',
  1700: 'numeric',
  2950: 'uuid',
  3802: 'jsonb',
  1000: 'bool[]',
  1005: 'int2[]',
  1007: 'int4[]',
  1016: 'int8[]',
  1009: 'text[]',
  1015: 'varchar[]',
};

/** The type name for an OID, or `oid:<n>` for types not listed. */
export function pgTypeName(oid: number): string {
  return NAMES[oid] ?? `oid:${oid}`;
}

/**
 * MariaDB 10.11's native functions (its help tables, and the function chapters of its manual). Not
 * a promise that the server calls the native one: 10.11 runs a stored function named `trunc`,
 * `mbrcoveredby` or `parentheses`, and `point()` or another geometry constructor at an arity the
 * native one lacks, so every call is looked up (mysql-routines.ts); the list only lets an unseen
 * name under a DEFINER body pass where the login sees every routine of the schema.
 */
export const MARIADB_BUILTINS: ReadonlySet<string> = new Set(
  [
    'abs acos adddate addtime area asbinary ascii asin astext aswkb aswkt atan atan2 avg benchmark bin',
    'binary bit bit_and bit_count bit_or bit_xor boundary buffer cast ceil ceiling centroid char',
    'char_length character_length charset chr coalesce coercibility collation compress concat concat_ws',
    'connection_id contains conv convert convexhull cos cot count crc32 crc32c crosses cume_dist curdate',
    'current_date current_time current_timestamp current_user curtime database date date_add date_format',
    'date_sub datediff datetime day dayname dayofmonth dayofweek dayofyear decode degrees dense_rank',
    'dimension disjoint double elt encode encrypt endpoint envelope equals exp export_set exteriorring',
    'extract extractvalue field find_in_set first_value float floor format found_rows from_base64',
    'from_days from_unixtime geomcollfromtext geomcollfromwkb geometrycollection',
    'geometrycollectionfromtext geometrycollectionfromwkb geometryfromtext geometryfromwkb geometryn',
    'geometrytype geomfromtext geomfromwkb get_lock glength greatest group_concat hex hour if ifnull',
    'inet6_aton inet6_ntoa inet_aton inet_ntoa insert instr interiorringn intersects interval',
    'is_free_lock is_ipv4 is_ipv6 is_used_lock isclosed isempty isnull isring issimple json_array',
    'json_array_append json_array_insert json_arrayagg json_compact json_contains json_contains_path',
    'json_depth json_detailed json_exists json_extract json_insert json_keys json_length json_loose',
    'json_merge json_merge_patch json_merge_preserve json_object json_objectagg json_query json_quote',
    'json_remove json_replace json_search json_set json_type json_unquote json_valid json_value lag',
    'last_day last_insert_id last_value lastval lcase lead least left length lengthb linefromtext',
    'linefromwkb linestring linestringfromtext linestringfromwkb ln load_file localtime localtimestamp',
    'locate log log10 log2 lower lpad ltrim make_set makedate maketime master_pos_wait max mbrcontains',
    'mbrcoveredby mbrdisjoint mbrequal mbrintersects mbroverlaps mbrtouches mbrwithin md5 median',
    'mediumint microsecond mid min minute mlinefromtext mlinefromwkb mod month monthname mpointfromtext',
    'mpointfromwkb mpolyfromtext mpolyfromwkb multilinestring multilinestringfromtext',
    'multilinestringfromwkb multipoint multipointfromtext multipointfromwkb multipolygon',
    'multipolygonfromtext multipolygonfromwkb name_const nchar nextval now nth_value ntile nullif',
    'numgeometries numinteriorrings numpoints nvl nvl2 oct octet_length ord overlaps parentheses',
    'password percent_rank pi point pointfromtext pointfromwkb pointn pointonsurface polyfromtext',
    'polyfromwkb polygon polygonfromtext polygonfromwkb position pow power quarter quote radians rand',
    'rank regexp_instr regexp_replace regexp_substr release_lock repeat replace reverse right round',
    'row_count row_number rownum rpad rtrim schema second session_user setval sformat sha1 sha2 sign sin',
    'sleep soundex space sqrt srid st_astext st_distance st_geomfromtext st_x st_y startpoint std stddev',
    'str_to_date strcmp subdate substr substring substring_index subtime sum sysdate system_user tan',
    'time timediff timestamp timestampadd timestampdiff to_base64 to_days touches trim trunc truncate',
    'ucase uncompress unhex unix_timestamp updatexml upper user utc_date utc_time utc_timestamp uuid',
    'varbinary varchar varchar2 varcharacter variance version week weekday weekofyear weight_string',
    'within x y year yearweek',
  ].flatMap((line) => line.split(' ')),
);

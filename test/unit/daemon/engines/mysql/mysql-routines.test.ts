import { describe, expect, it } from 'vitest';
import {
  changesRows,
  type Definition,
  definitionsQuery,
  everyRoutineQuery,
  existingNamesQuery,
  hiddenDefinitionRefusal,
  judgeDefinition,
  mayAssignContextRefusal,
  NARROW_OVER,
  narrowsNames,
  outParameterRefusal,
  outParametersQuery,
  probablyNative,
  reachedBy,
  shownName,
  statementUnreadableRefusal,
  storedModeRefusal,
  unreadableRefusal,
  updatableViewRefusal,
} from '../../../../../daemon/engines/mysql/mysql-routines.js';

const fn = (body: string, security = 'DEFINER'): Definition => ({ kind: 'FUNCTION', schema: 'shop', name: 'f', security, body });
const does = (body: string): string | undefined => judgeDefinition(fn(body)).does;

describe('what a MySQL-family statement reaches', () => {
  it('names every function it calls, a native name too: the server says which are stored ones', () => {
    expect(reachedBy('SELECT kill_q(20), count(*), trunc(1), IF(a, 1, 2) FROM t')).toEqual({
      routines: [
        { schema: undefined, name: 'kill_q' },
        { schema: undefined, name: 'count' },
        { schema: undefined, name: 'trunc' },
      ],
      relations: [
        { schema: undefined, name: 'a' },
        { schema: undefined, name: 't' },
      ],
      packages: [],
    });
    expect(reachedBy('SELECT count (*)').routines).toEqual([{ schema: undefined, name: 'count' }]);
    expect(reachedBy('SELECT concat(a)').routines).toEqual([{ schema: undefined, name: 'concat' }]);
  });

  it('looks up the native names a body calls', () => {
    const { routines } = judgeDefinition(fn('RETURN trunc(x) + mbrcoveredby(x) + point() + CONCAT(x)')).reached;
    expect(routines.map((r) => r.name)).toEqual(['trunc', 'mbrcoveredby', 'point', 'CONCAT']);
  });

  it('reads qualified, quoted and executable-comment names', () => {
    const { routines } = reachedBy('SELECT `shop`.`Dump_It`(), other.g(1) /*! , h(2) */');
    expect(routines).toEqual([
      { schema: 'shop', name: 'Dump_It' },
      { schema: 'other', name: 'g' },
      { schema: undefined, name: 'h' },
    ]);
  });

  it('takes every name of the statement as a possible view, wherever the grammar puts it', () => {
    const names = (sql: string) => reachedBy(sql).relations.map((r) => `${r.schema ?? ''}.${r.name}`);
    for (const sql of [
      'SELECT * FROM (v_slow)',
      'SELECT * FROM orders WHERE id IN (SELECT s FROM (v_slow))',
      "SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS(a INT PATH '$')) j, v_slow",
      'SELECT * FROM (orders, v_slow)',
      'SELECT * FROM orders JOIN (v_slow) ON 1',
    ])
      expect(names(sql), sql).toContain('.v_slow');
    expect(names('SELECT o.item FROM shop . v_slow o')).toEqual(expect.arrayContaining(['.o', 'o.item', 'shop.v_slow']));
    // Reserved words, variables and calls are not names of relations.
    expect(names('SELECT @v, @@global.x, count(*) FROM DUAL WHERE 1 IS NOT NULL')).toEqual(['global.x']);
  });

  it("takes a name after a lone dot as the current database's, as sql_yacc.yy table_ident does", () => {
    const names = (sql: string) => reachedBy(sql).relations.map((r) => `${r.schema ?? ''}.${r.name}`);
    for (const sql of [
      'SELECT * FROM .v',
      'SELECT * FROM . v',
      'SELECT * FROM t JOIN .v ON 1',
      'SELECT * FROM t x STRAIGHT_JOIN /* c */ . /* d */ v',
      'SELECT * FROM t, .v',
      'SELECT * FROM (.v)',
      'SELECT * FROM t JOIN.`v` ON 1',
      'SELECT * FROM .`v`',
    ])
      expect(names(sql), sql).toContain('.v');
    // A word right before the dot and a name right after it is the schema, whatever it spells.
    expect(names('SELECT * FROM shop.v')).not.toContain('.v');
    expect(names('SELECT * FROM `shop`.v')).not.toContain('.v');
    // Spaced, a keyword before the dot is read as a keyword or a schema by where it stands: both.
    expect(names('HANDLER .v OPEN')).toContain('.v');
    expect(names('SELECT * FROM status .v')).toEqual(expect.arrayContaining(['status.v', '.v']));
    // In a body, the routine's own schema.
    expect(judgeDefinition(fn('RETURN (SELECT a FROM .v)')).reached.relations).toContainEqual({ schema: undefined, name: 'v' });
  });

  it('takes a quoted dual as a name; the unquoted DUAL reads no table', () => {
    const names = (sql: string) => reachedBy(sql).relations.map((r) => `${r.schema ?? ''}.${r.name}`);
    expect(names('SELECT * FROM `dual`')).toContain('.dual');
    expect(names('SELECT * FROM .dual')).toContain('.dual');
    expect(names('SELECT * FROM shop.dual')).toContain('shop.dual');
    expect(names('SELECT 1 FROM DUAL')).toEqual([]);
  });

  it('takes a name before a column list as a relation: INSERT, REPLACE, LOAD DATA', () => {
    const names = (sql: string) => reachedBy(sql).relations.map((r) => `${r.schema ?? ''}.${r.name}`);
    for (const sql of [
      'INSERT INTO wv (customer_id, v) VALUES (1, 6)',
      'INSERT INTO wv(customer_id) VALUES (1)',
      'INSERT wv (v) VALUES (1)',
      'INSERT LOW_PRIORITY IGNORE wv (v) SELECT 1',
      'REPLACE DELAYED INTO wv (v) VALUES (1)',
      "LOAD DATA INFILE 'f' INTO TABLE wv (v)",
      'INSERT INTO .wv (v) VALUES (1)',
      'REPLACE .wv (v) VALUES (1)',
      'INSERT . wv(v) VALUES (1)',
    ])
      expect(names(sql), sql).toContain('.wv');
    expect(names('INSERT INTO shop.wv (v) VALUES (1)')).toContain('shop.wv');
    expect(names('SELECT f(1) FROM t')).not.toContain('.f');
  });

  it("takes names by MariaDB's identifier rules: a digit or $ may start one, and any word after a dot is one", () => {
    const names = (sql: string) => reachedBy(sql).relations.map((r) => `${r.schema ?? ''}.${r.name}`);
    // sql_lex.cc MY_LEX_NUMBER_IDENT: digits then an identifier character make an identifier,
    // unless the text is a number (1e5, 0x1f, 0b01); `$` is an identifier character.
    for (const name of ['2v', '9_', '1e', '0x1g', '0b1z', '0x', '0b2', '1e_', '$v', 'v$', '1ü', '2$'])
      expect(names(`SELECT * FROM ${name}`), name).toContain(`.${name}`);
    for (const sql of ['SELECT * FROM 1e5v', 'SELECT * FROM 0x1f', 'SELECT * FROM 0b01', 'SELECT 123'])
      expect(names(sql), sql).not.toContain(`.${sql.split(' ').pop()}`);
    // MY_LEX_IDENT_SEP: after a dot the server reads an identifier, of digits or a keyword too.
    for (const name of ['1e5v', '123', '1e5', '0x1f', 'order', 'key', 'select', 'values', 'lock', 'rows', 'default'])
      expect(names(`SELECT * FROM shop.${name}`), name).toContain(`shop.${name}`);
    expect(names('SELECT * FROM shop .order')).toContain('shop.order');
    expect(names('SELECT (SELECT l FROM 9_)')).toContain('.9_');
    // The statement check's own reading (`1f(` as `1` and `f(`) is looked up too.
    expect(reachedBy('SELECT 1f(), $f(), shop.1e5f(), 2x.9y()').routines).toEqual(
      expect.arrayContaining([
        { schema: undefined, name: '1f' },
        { schema: undefined, name: '$f' },
        { schema: 'shop', name: '1e5f' },
        { schema: '2x', name: '9y' },
      ]),
    );
    // A body is read by the same rules.
    const { reached } = judgeDefinition(fn('BEGIN RETURN (SELECT l FROM 2v) + 1f() + (SELECT 1 FROM shop.order); END'));
    expect(reached.relations).toEqual(
      expect.arrayContaining([
        { schema: undefined, name: '2v' },
        { schema: 'shop', name: 'order' },
      ]),
    );
    expect(reached.routines).toContainEqual({ schema: undefined, name: '1f' });
  });

  it('takes each qualified call as a possible member of a package: db.pkg.f() and pkg.f() in the current database', () => {
    expect(reachedBy('SELECT shop.pk.f(1), pk2.g(), h(), `shop`.`Pk3`.`f`()').packages).toEqual([
      { schema: 'shop', name: 'pk' },
      { schema: undefined, name: 'pk2' },
      { schema: 'shop', name: 'Pk3' },
    ]);
    expect(reachedBy('CALL shop.pk.p()').packages).toEqual([{ schema: 'shop', name: 'pk' }]);
    expect(reachedBy('CALL pk.p').packages).toEqual([{ schema: undefined, name: 'pk' }]);
    expect(reachedBy('CALL p()').packages).toEqual([]);
    // In a body, the routine's own schema.
    expect(judgeDefinition(fn('RETURN pk.f() + shop.pk.g()')).reached.packages).toEqual([
      { schema: undefined, name: 'pk' },
      { schema: 'shop', name: 'pk' },
    ]);
  });

  it('asks for a package by its own branch, the package and its body only', () => {
    const query = definitionsQuery([{ kind: 'package', name: { schema: 'shop', name: 'pk' } }], { routinesAsOne: true });
    expect(query.values).toEqual(['shop', 'pk']);
    expect(query.sql).toMatch(
      /ROUTINE_SCHEMA = \? AND ROUTINE_NAME = CONVERT\(\? USING utf8mb4\) COLLATE utf8mb4_general_ci AND ROUTINE_TYPE IN \('PACKAGE', 'PACKAGE BODY'\)/,
    );
  });

  it('reads [name] as a name, as sql_mode MSSQL does, in a statement and in a body', () => {
    const names = (relations: readonly { schema: string | undefined; name: string }[]) =>
      relations.map((r) => `${r.schema ?? ''}.${r.name}`);
    expect(names(reachedBy('SELECT * FROM [order], shop.[2 v]').relations)).toEqual(expect.arrayContaining(['.order', 'shop.2 v']));
    const { reached } = judgeDefinition(fn('BEGIN RETURN (SELECT l FROM [order]) + (SELECT l FROM [a]]b]) + [1f](); END'));
    expect(names(reached.relations)).toEqual(expect.arrayContaining(['.order', '.a]b']));
    expect(reached.routines).toContainEqual({ schema: undefined, name: '1f' });
    // A JSON path in a string is no name.
    expect(names(reachedBy("SELECT JSON_VALUE(j, '$[0]') FROM t").relations)).toEqual(['.j', '.t']);
  });

  it('takes the names of a long text, more than a call may pass as arguments', () => {
    const sql = `SELECT ${Array.from({ length: 200_000 }, (_, i) => `c${i % 100} + f${i % 50}(x)`).join(', ')} FROM t`;
    const { routines, relations } = reachedBy(sql);
    expect(routines).toHaveLength(50);
    expect(relations).toHaveLength(102);
  });

  it('takes every name followed by ( as a possible stored function, a keyword-like one too', () => {
    expect(reachedBy('SELECT of(0), lateral(1), until (2)').routines.map((r) => r.name)).toEqual(['of', 'lateral', 'until']);
  });

  it('names every relation of a FROM list and its joins as a possible view', () => {
    const { relations } = reachedBy('SELECT * FROM a x, shop.b AS y JOIN `c` USING (id) LEFT JOIN (SELECT 1 FROM d) z ON 1 WHERE 1');
    expect(relations).toEqual(
      expect.arrayContaining([
        { schema: undefined, name: 'a' },
        { schema: 'shop', name: 'b' },
        { schema: undefined, name: 'c' },
        { schema: undefined, name: 'd' },
      ]),
    );
  });

  it("asks for each name by its own branch, routine names by the server's comparison of them", () => {
    const query = definitionsQuery([
      { kind: 'routine', name: { schema: undefined, name: 'f' } },
      { kind: 'relation', name: { schema: 'shop', name: 'v' } },
    ]);
    expect(query.values).toEqual(['f', 'shop', 'v']);
    expect(query.sql).toMatch(
      /SELECT 0 AS i, .*ROUTINE_SCHEMA = DATABASE\(\) AND ROUTINE_NAME = CONVERT\(\? USING utf8mb4\) COLLATE utf8mb4_general_ci/,
    );
    expect(query.sql).toMatch(/SELECT 1 AS i, .*TABLE_SCHEMA = \? AND TABLE_NAME = \?/);
  });

  it('asks for all routine names of a schema by one branch where the server has JSON_TABLE, whatever their number', () => {
    const routine = (schema: string | undefined, name: string) => ({ kind: 'routine' as const, name: { schema, name } });
    const lookups = [
      routine(undefined, 'NOW'),
      { kind: 'relation' as const, name: { schema: 'shop', name: 'v' } },
      routine('shop', 'f'),
      routine(undefined, 'k\u00edll_q"\\'),
      routine(undefined, 'bad\ud800'),
    ];
    const query = definitionsQuery(lookups, { routinesAsOne: true });
    const branches = query.sql.split('\nUNION ALL\n');
    // One routine branch per schema, and the view its own.
    expect(branches).toHaveLength(3);
    const routines = branches.filter((b) => b.includes('information_schema.ROUTINES'));
    expect(routines).toHaveLength(2);
    for (const branch of routines) {
      // Each row says which lookup it answers; the names compare as a call resolves them.
      expect(branch).toMatch(
        /JSON_TABLE\(\?, '\$\[\*\]' COLUMNS\(i INT PATH '\$\[0\]', n LONGTEXT CHARACTER SET utf8mb4 PATH '\$\[1\]'\)\)/,
      );
      expect(branch).toMatch(/r\.ROUTINE_NAME = c\.n COLLATE utf8mb4_general_ci/);
      expect(branch).toMatch(/SELECT c\.i AS i, /);
    }
    expect(routines[0]).toMatch(/r\.ROUTINE_SCHEMA = DATABASE\(\)$/);
    expect(routines[1]).toMatch(/r\.ROUTINE_SCHEMA = \?$/);
    const [unqualified, shopNames, shop, viewSchema, view] = query.values;
    // A lone surrogate is sent as the driver sends a bound string: U+FFFD.
    expect(JSON.parse(unqualified as string)).toEqual([
      [0, 'NOW'],
      [3, 'k\u00edll_q"\\'],
      [4, 'bad\ufffd'],
    ]);
    expect(JSON.parse(shopNames as string)).toEqual([[2, 'f']]);
    expect([shop, viewSchema, view]).toEqual(['shop', 'shop', 'v']);
    expect(branches[2]).toMatch(/SELECT 1 AS i, .*TABLE_SCHEMA = \? AND TABLE_NAME = \?/);
    // The statement does not grow with the names.
    const many = Array.from({ length: 50 }, (_, i) => routine(undefined, `f${i}`));
    expect(definitionsQuery(many, { routinesAsOne: true }).sql).toBe(definitionsQuery(many.slice(0, 1), { routinesAsOne: true }).sql);
  });

  it("asks whether the login sees every routine of a schema by the login's own grants", () => {
    const query = everyRoutineQuery('shop');
    expect(query.values).toEqual(['shop']);
    expect(query.sql).toMatch(/USER_PRIVILEGES WHERE GRANTEE = CONCAT\(.*CURRENT_USER\(\)/);
    expect(query.sql).toMatch(/TABLE_SCHEMA = 'mysql' AND TABLE_NAME = 'proc' AND PRIVILEGE_TYPE = 'SELECT'/);
    expect(query.sql).toMatch(/TABLE_SCHEMA = \? AND PRIVILEGE_TYPE = 'SHOW CREATE ROUTINE'/);
  });

  it('first asks which of many relation names name a table or view, in one pass per schema', () => {
    const columns = Array.from({ length: NARROW_OVER }, (_, i) => ({
      kind: 'relation' as const,
      name: { schema: undefined, name: `c${i}` },
    }));
    // A few names are looked up by their own branches, as before.
    expect(existingNamesQuery(columns)).toBeUndefined();
    const lookups = [
      { kind: 'routine' as const, name: { schema: undefined, name: 'f' } },
      ...columns,
      { kind: 'relation' as const, name: { schema: 'shop', name: 'v' } },
      { kind: 'relation' as const, name: { schema: undefined, name: 'c\u00ed"\\' } },
    ];
    const query = existingNamesQuery(lookups);
    expect(query).toBeDefined();
    // One branch per schema, whatever the number of names: the names are one bound JSON array of [index, name].
    expect(query?.sql.split('UNION ALL')).toHaveLength(2);
    expect(query?.sql).toMatch(
      /JSON_TABLE\(\?, .*WHERE c\.n IN \(SELECT TABLE_NAME FROM information_schema\.TABLES WHERE TABLE_SCHEMA = DATABASE\(\)\)/,
    );
    expect(query?.sql).toMatch(/TABLE_SCHEMA = \?\)/);
    const [unqualified, schemaNames, schema] = query?.values ?? [];
    expect(JSON.parse(unqualified as string)).toEqual([...columns.map((c, i) => [i + 1, c.name.name]), [NARROW_OVER + 2, 'c\u00ed"\\']]);
    expect(JSON.parse(schemaNames as string)).toEqual([[NARROW_OVER + 1, 'v']]);
    expect(schema).toBe('shop');
    // The query does not grow with the names: a wide select list is one statement the server parses at once.
    const wide = Array.from({ length: 2000 }, (_, i) => ({ kind: 'relation' as const, name: { schema: undefined, name: `c${i}` } }));
    expect(existingNamesQuery(wide)?.sql).toBe(existingNamesQuery(columns.concat(columns))?.sql);
  });

  it('narrows names only where the server has JSON_TABLE', () => {
    expect(narrowsNames('mariadb', [10, 11, 19])).toBe(true);
    expect(narrowsNames('mariadb', [10, 6, 0])).toBe(true);
    expect(narrowsNames('mariadb', [10, 5, 27])).toBe(false);
    expect(narrowsNames('mysql', [8, 4, 0])).toBe(false);
  });

  it('looks up every spelling of a name: only the server tells which are the same routine', () => {
    // JavaScript folds the Kelvin sign to k; MariaDB's collation does not.
    const { routines } = reachedBy('SELECT \u212Aill_q(1), kill_q(2), KILL_Q(3), kíll_q(4)');
    expect(routines.map((r) => r.name)).toEqual(['\u212Aill_q', 'kill_q', 'KILL_Q', 'kíll_q']);
  });

  it("takes a name as native only when it is one of the server's native functions, exactly, and unqualified", () => {
    expect(probablyNative({ schema: 'shop', name: 'JSON_EXTRACT' })).toBe(false);
    expect(probablyNative({ schema: undefined, name: 'JSON_EXTRACT' })).toBe(true);
    expect(probablyNative({ schema: undefined, name: 'json_steal' })).toBe(false);
    expect(probablyNative({ schema: undefined, name: 'st_kill' })).toBe(false);
    expect(probablyNative({ schema: undefined, name: 'mbrkill' })).toBe(false);
  });
});

describe('a routine body judged by the statement check', () => {
  it('reads `@a.` as one variable name (sql_lex.cc MY_LEX_HOSTNAME), so INTO after it assigns the next one', () => {
    const judged = judgeDefinition(fn('BEGIN SELECT 1 ORDER BY @a. INTO @mcp_customer_id; RETURN 1; END'));
    expect(judged.setsContext).toMatch(/mcp_customer_id/);
  });

  it.each([
    ['BEGIN KILL QUERY i; RETURN 1; END', /KILL/],
    ['BEGIN SET GLOBAL long_query_time = secs; RETURN @@global.long_query_time; END', /SET GLOBAL/],
    ['BEGIN SET @@global.max_connections = 1, y = 2; RETURN 1; END', /SET GLOBAL/],
    ["BEGIN SELECT 1 INTO OUTFILE '/tmp/x'; RETURN 1; END", /INTO OUTFILE/],
    ["BEGIN DECLARE x INT; SELECT 1 INTO DUMPFILE '/tmp/x'; RETURN 1; END", /INTO DUMPFILE/],
    ["RETURN GET_LOCK('a', 0)", /get_lock/],
    ['RETURN NEXTVAL(s)', /nextval/],
    ['RETURN LAST_INSERT_ID(5)', /LAST_INSERT_ID/],
    ["RETURN LOAD_FILE('/etc/passwd')", /load_file/],
    ['BEGIN UPDATE counters SET n = n + 1; RETURN 1; END', /UPDATE/],
    ['BEGIN IF x THEN FLUSH TABLES; END IF; RETURN 1; END', /FLUSH/],
    ['BEGIN DECLARE CONTINUE HANDLER FOR SQLSTATE VALUE "42000", NOT FOUND KILL 3; RETURN 1; END', /KILL/],
    ['BEGIN lbl: LOOP DO 1; END LOOP lbl; RETURN 1; END', /DO/],
    ['BEGIN PREPARE s FROM @q; EXECUTE s; END', /PREPARE/],
    ['BEGIN XA START "x"; RETURN 1; END', /XA/],
    ['RETURN (SELECT a FROM t FOR UPDATE)', /FOR UPDATE/],
    ['RETURN (SELECT authentication_string FROM mysql.user LIMIT 1)', /password|credential|mysql\.user/i],
    ['BEGIN WHILE i < 3 DO INSERT INTO t VALUES (i); END WHILE; RETURN 1; END', /INSERT/],
    ['BEGIN SET STATEMENT max_statement_time = 1 FOR DELETE FROM t; RETURN 1; END', /DELETE/],
    ['BEGIN FOR r IN (SELECT a FROM t) DO KILL r.a; END FOR; RETURN 1; END', /KILL/],
    ['BEGIN FOR r IN (SELECT a FROM t FOR UPDATE) DO SET x = 1; END FOR; RETURN 1; END', /FOR UPDATE/],
    // sql_lex.cc MY_LEX_HOSTNAME: `@a.` is one variable name, and INTO after it a keyword.
    ["BEGIN SELECT 1 ORDER BY @a. INTO OUTFILE '/tmp/x'; RETURN 1; END", /OUTFILE/],
    // The raw-text layer: the word anywhere in the body, whatever its tokens.
    ["BEGIN DECLARE x TEXT DEFAULT 'outfile'; RETURN 1; END", /OUTFILE/],
  ])('refuses %s', (body, what) => {
    expect(does(body)).toMatch(what);
  });

  it.each([
    'RETURN @mcp_customer_id',
    'RETURN x + 1',
    'BEGIN DECLARE y INT DEFAULT 1; DECLARE c CURSOR FOR SELECT a FROM t; IF x > 0 THEN SET y = x + 1; ELSEIF x < 0 THEN SET y = 0; ELSE SET y = -1; END IF; RETURN y; END',
    'BEGIN DECLARE n INT; SELECT count(*) INTO n FROM t WHERE a = x; RETURN CASE WHEN n > 0 THEN n ELSE 0 END; END',
    'BEGIN DECLARE v VARCHAR(64); DECLARE done INT DEFAULT 0; DECLARE CONTINUE HANDLER FOR NOT FOUND SET done = 1; OPEN c; l: LOOP FETCH c INTO v; IF done THEN LEAVE l; END IF; END LOOP; CLOSE c; RETURN v; END',
    'BEGIN CASE x WHEN 1 THEN SET y = 2; ELSE SET y = 3; END CASE; REPEAT SET y = y + 1; UNTIL y > 5 END REPEAT; RETURN TRIM(BOTH FROM y); END',
    "BEGIN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no'; END",
    'BEGIN DECLARE s INT DEFAULT 0; FOR r IN (SELECT a FROM t) DO SET s = s + r.a; END FOR; FOR i IN 1 .. 3 DO SET s = s + i; END FOR; RETURN s; END',
    'BEGIN SET SESSION sql_mode = DEFAULT; CALL other(x); RETURN 1; END',
  ])('passes %s', (body) => {
    expect(does(body)).toBeUndefined();
  });

  it('tells where a body assigns a context variable, in every form', () => {
    for (const body of [
      "BEGIN SET @mcp_customer_id = '2'; RETURN 1; END",
      "BEGIN SET x = 1, @`mcp_customer_id` = '2'; RETURN 1; END",
      'BEGIN SELECT 2 INTO @mcp_customer_id; RETURN 1; END',
      'BEGIN SELECT a INTO v, @MCP_CUSTOMER_ID FROM t LIMIT 1; RETURN 1; END',
      "RETURN (@mcp_customer_id := '2')",
      'BEGIN FETCH c INTO @mcp_customer_id; RETURN 1; END',
      'BEGIN GET DIAGNOSTICS @mcp_customer_id = NUMBER; RETURN 1; END',
      'BEGIN CALL pz(@mcp_customer_id); RETURN 1; END',
      'BEGIN CALL pz(1, @`mcp_customer_id`); RETURN 1; END',
    ])
      expect(judgeDefinition(fn(body)).setsContext, body).toMatch(/^@mcp_customer_id$/i);
    expect(judgeDefinition(fn('RETURN @mcp_customer_id')).setsContext).toBeUndefined();
  });

  it('tells whether a body reads tables, and what it calls', () => {
    const judged = judgeDefinition(fn('BEGIN CALL shop.p(1); RETURN (SELECT g(a) FROM t) + count(*); END'));
    expect(judged.readsTables).toBe(true);
    expect(judged.reached.routines).toEqual([
      { schema: 'shop', name: 'p' },
      { schema: undefined, name: 'g' },
      { schema: undefined, name: 'count' },
    ]);
    expect(judgeDefinition(fn('RETURN @mcp_customer_id')).readsTables).toBe(false);
  });

  it("judges a view's definition for the built-ins it calls, and names the functions and views it reads", () => {
    const view: Definition = { kind: 'VIEW', schema: 'shop', name: 'v', security: 'DEFINER', body: "select get_lock('a',0) AS `l`" };
    expect(judgeDefinition(view).does).toMatch(/get_lock/);
    const other: Definition = { ...view, body: 'select `shop`.`dump_it`() AS `d` from `shop`.`w`' };
    expect(judgeDefinition(other)).toMatchObject({
      reached: { routines: [{ schema: 'shop', name: 'dump_it' }], relations: expect.arrayContaining([{ schema: 'shop', name: 'w' }]) },
    });
  });
});

describe('a body read as the server may have stored it', () => {
  it('judges a body under every sql_mode reading: with NO_BACKSLASH_ESCAPES a backslash ends no string', () => {
    expect(does("BEGIN DECLARE d VARCHAR(20) DEFAULT 'C:\\'; KILL QUERY i; SET d = 'D:\\'; RETURN d; END")).toMatch(/KILL/);
    expect(does("BEGIN DECLARE d VARCHAR(20) DEFAULT 'C:\\'; SET GLOBAL long_query_time = s; SET d = 'D:\\'; RETURN d; END")).toMatch(
      /SET GLOBAL/,
    );
    // Under ANSI_QUOTES a double-quoted text is a name, not a string hiding what follows.
    expect(does('BEGIN DECLARE d VARCHAR(20) DEFAULT "x\\"; KILL QUERY i; SET d = "y"; RETURN d; END')).toMatch(/KILL/);
    const judged = judgeDefinition(fn("RETURN CONCAT('C:\\', g(1), ' ')"));
    expect(judged.reached.routines).toEqual([
      { schema: undefined, name: 'CONCAT' },
      { schema: undefined, name: 'g' },
    ]);
  });
});

describe('where rows are separated', () => {
  it("finds a body or view reading the executor's statistics", () => {
    const body = fn(
      "RETURN (SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'HANDLER_READ_NEXT')",
      'INVOKER',
    );
    expect(judgeDefinition(body).separatedDoes).toMatch(/SESSION_STATUS/);
    expect(judgeDefinition(fn('RETURN @mcp_customer_id')).separatedDoes).toBeUndefined();
  });
});

describe('a sequence where rows are separated', () => {
  const named = (sql: string) => reachedBy(sql).relations.map((r) => `${r.schema ?? ''}.${r.name}${r.sequenceCall ? ' (call)' : ''}`);

  it("marks a name the sequence functions name, and only there, as their sequence's", () => {
    const calls = named('SELECT NEXTVAL(s), LASTVAL(shop.s2), SETVAL(s3, 5), NEXT VALUE FOR s4, PREVIOUS VALUE FOR `shop`.`s5`');
    expect(calls.filter((name) => /\.s\d?( |$)/.test(name))).toEqual([
      '.s (call)',
      'shop.s2 (call)',
      '.s3 (call)',
      '.s4 (call)',
      'shop.s5 (call)',
    ]);
    // Read as a relation anywhere in the text, it is a read.
    expect(named('SELECT NEXTVAL(s) FROM s')).toEqual(['.s']);
    expect(named('SELECT next_not_cached_value FROM s WHERE NEXTVAL(s) > 0')).toContain('.s');
    // A stored function of that name, qualified, is no sequence function; nor a wider argument.
    expect(named('SELECT shop.nextval(s)')).toContain('.s');
    expect(named('SELECT NEXTVAL(s + 1)')).toContain('.s');
    expect(named('SELECT SETVAL(s)')).toContain('.s');
  });

  it("asks which read relations are sequences only when told, and not for a sequence function's", () => {
    const lookups = [
      { kind: 'relation' as const, name: { schema: 'shop', name: 's' } },
      { kind: 'relation' as const, name: { schema: undefined, name: 't', sequenceCall: true as const } },
    ];
    expect(definitionsQuery(lookups).sql).not.toContain("'SEQUENCE'");
    const query = definitionsQuery(lookups, { sequences: true });
    expect(query.sql.match(/TABLE_TYPE = 'SEQUENCE'/g)).toHaveLength(1);
    expect(query.sql).toMatch(/SELECT 0 AS i, 'SEQUENCE' AS kind, .*TABLE_SCHEMA = \? AND TABLE_NAME = \? AND TABLE_TYPE = 'SEQUENCE'/);
    expect(query.values).toEqual(['shop', 's', 'shop', 's', 't']);
  });
});

describe('a procedure body statement judged by its lead', () => {
  const proc = (body: string): Definition => ({ kind: 'PROCEDURE', schema: 'shop', name: 'p', security: 'DEFINER', body });

  it('refuses what shows credentials or other sessions, and where rows are separated the status', () => {
    expect(judgeDefinition(proc('BEGIN SELECT 1; SHOW GRANTS FOR root; END')).does).toMatch(/SHOW GRANTS/);
    expect(judgeDefinition(proc('BEGIN SHOW FULL PROCESSLIST; END')).does).toMatch(/PROCESSLIST/i);
    const status = judgeDefinition(proc('BEGIN SHOW SESSION STATUS; END'));
    expect(status.does).toBeUndefined();
    expect(status.separatedDoes).toMatch(/SHOW SESSION STATUS/);
  });
});

describe('a body that changes the session', () => {
  const changes = (body: string): string | undefined => judgeDefinition(fn(body)).changesSession;
  it.each([
    ["BEGIN SET sql_mode = 'ANSI_QUOTES'; RETURN 1; END", 'sql_mode'],
    ["BEGIN SET SESSION sql_mode = ''; RETURN 1; END", 'sql_mode'],
    ['BEGIN SET LOCAL sql_log_off = 1; RETURN 1; END', 'sql_log_off'],
    ["BEGIN SET @@sql_mode = ''; RETURN 1; END", 'sql_mode'],
    ["BEGIN SET @@session.sql_mode = ''; RETURN 1; END", 'sql_mode'],
    ['BEGIN DECLARE s INT; SET s = 1, sql_log_off = 1; RETURN s; END', 'sql_log_off'],
    ['BEGIN DECLARE s INT; SET s = 1, tx_read_only = 0; RETURN s; END', 'tx_read_only'],
    ['BEGIN DECLARE s INT; SET s = 1, @mcp_customer_id = 2; RETURN s; END', '@mcp_customer_id'],
    ['BEGIN SET @x = 1; RETURN 1; END', '@x'],
    ['BEGIN SET @`y z` = 1; RETURN 1; END', '@y z'],
    ['BEGIN DECLARE s INT; SET s = (SELECT 1), @x := 2; RETURN s; END', '@x'],
    ['BEGIN SELECT 1 INTO @x; RETURN 1; END', '@x'],
    ['BEGIN DECLARE s INT; SELECT 1, 2 INTO s, @x; RETURN s; END', '@x'],
    ['RETURN (SELECT @x := 5)', '@x'],
    ['BEGIN GET DIAGNOSTICS @n = ROW_COUNT; RETURN 1; END', '@n'],
    ['BEGIN SET NAMES latin1; RETURN 1; END', 'NAMES'],
    ['BEGIN SET STATEMENT max_statement_time = 1 FOR SET @x = 1; RETURN 1; END', '@x'],
    // A name is local only within the block that declares it (sp_pcontext): outside, the system variable.
    ["BEGIN BEGIN DECLARE sql_mode INT; END; SET sql_mode = 'ANSI_QUOTES'; RETURN @@sql_mode; END", 'sql_mode'],
    [
      'BEGIN DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN DECLARE max_error_count INT; END; SET max_error_count = 7; RETURN 1; END',
      'max_error_count',
    ],
    [
      "BEGIN FOR optimizer_switch IN 1 .. 1 DO BEGIN END; END FOR; SET optimizer_switch = 'condition_pushdown_for_derived=on'; RETURN 1; END",
      'optimizer_switch',
    ],
    ['BEGIN l: BEGIN DECLARE sql_log_off INT; END l; SET sql_log_off = 1; RETURN 1; END', 'sql_log_off'],
    ['BEGIN IF 1 THEN BEGIN DECLARE sql_log_off INT; SET sql_log_off = 1; END; END IF; SET sql_log_off = 1; RETURN 1; END', 'sql_log_off'],
    ['BEGIN WHILE 0 DO BEGIN DECLARE sql_log_off INT; END; END WHILE; SET sql_log_off = 1; RETURN 1; END', 'sql_log_off'],
    [
      'BEGIN DECLARE s INT; BEGIN DECLARE sql_log_off INT; SET s = CASE WHEN 1 THEN 2 ELSE 3 END; END; SET sql_log_off = 1; RETURN s; END',
      'sql_log_off',
    ],
    ['BEGIN CASE WHEN 1 THEN BEGIN DECLARE sql_log_off INT; END; END CASE; SET sql_log_off = 1; RETURN 1; END', 'sql_log_off'],
    ['BEGIN FOR sql_log_off IN 1 .. 2 DO SET sql_log_off = 1; END FOR; SET sql_log_off = 1; RETURN 1; END', 'sql_log_off'],
    ['BEGIN BEGIN NOT ATOMIC DECLARE sql_log_off INT; END; SET sql_log_off = 1; RETURN 1; END', 'sql_log_off'],
    // An OUT or INOUT argument assigns the user variable passed to it, however it is quoted.
    ["BEGIN CALL pz(@q); RETURN COALESCE(@q, 'q is NULL'); END", '@q'],
    ['BEGIN CALL pz(1, @`q`); RETURN 1; END', '@q'],
    ["BEGIN CALL pz(@'q'); RETURN 1; END", '@q'],
    ['BEGIN CALL pz(@"q"); RETURN 1; END', '@q'],
    ['BEGIN CALL shop.pz((@q)); RETURN 1; END', '@q'],
    ['BEGIN IF 1 THEN CALL pz(@mcp_customer_id); END IF; RETURN 1; END', '@mcp_customer_id'],
  ])('%s changes %s', (body, variable) => {
    expect(changes(body)).toBe(variable);
  });

  it.each([
    'BEGIN DECLARE s INT DEFAULT 0; SET s = s + 1; RETURN s; END',
    'BEGIN DECLARE a, b INT; SET a = 1, b = 2; RETURN a + b; END',
    'BEGIN DECLARE `q` INT; SET Q = 1; RETURN q; END',
    'BEGIN DECLARE s INT; SELECT 1 INTO s; RETURN s + @x + @@sql_mode; END',
    'BEGIN DECLARE s INT; FOR i IN 1 .. 3 DO SET s = i; END FOR; RETURN s; END',
    'BEGIN DECLARE s INT; SET STATEMENT max_statement_time = 1 FOR SELECT 1 INTO s; RETURN s; END',
    'RETURN @x = 1',
    'BEGIN DECLARE s INT; BEGIN DECLARE t INT; SET s = 1, t = 2; BEGIN SET s = 3, t = 4; END; END; SET s = 5; RETURN s; END',
    'BEGIN DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN DECLARE e INT; SET e = 1; END; RETURN 1; END',
    'BEGIN FOR i IN 1 .. 3 DO SET i = 2; BEGIN SET i = 3; END; END FOR; RETURN 1; END',
    'BEGIN DECLARE s INT; IF 1 THEN SET s = 1; END IF; l: LOOP SET s = 2; LEAVE l; END LOOP l; SET s = CASE WHEN 1 THEN 1 END; SET s = 3; RETURN s; END',
    'BEGIN DECLARE s INT; CALL pz(s, @@sql_mode, 1); RETURN s; END',
  ])('%s changes nothing outside the call', (body) => {
    expect(changes(body)).toBeUndefined();
  });
});

describe('a routine or view whose text the login may not read', () => {
  const view = (security: string): Definition => ({ kind: 'VIEW', schema: 'shop', name: 'v', security, body: '' });

  it('refuses a view, naming it, its SQL SECURITY, the way it was reached and the grant that lets hanactl read it', () => {
    const definer = hiddenDefinitionRefusal(view('DEFINER'), ['the view shop.outer'], 'agent');
    expect(definer.code).toBe('STATEMENT_REFUSED');
    expect(definer.message).toMatch(/the view shop\.v \(reached through the view shop\.outer\)/);
    expect(definer.message).toMatch(/SQL SECURITY DEFINER view whose definition this login may not read/);
    expect(definer.message).toMatch(/owner's rights/);
    expect(definer.message).toMatch(/GRANT SHOW VIEW ON shop\.v TO agent/);
    expect(definer.details).toMatchObject({ rule: 'stored-routine' });
    const invoker = hiddenDefinitionRefusal(view('INVOKER'), [], 'agent');
    expect(invoker.message).toMatch(/SQL SECURITY INVOKER view/);
    expect(invoker.message).not.toMatch(/reached through|owner's rights/);
  });

  it('refuses a routine with the grant that lets hanactl read bodies', () => {
    const routine = hiddenDefinitionRefusal({ ...fn(''), body: null }, [], 'agent');
    expect(routine.message).toMatch(/shop\.f\(\), a SQL SECURITY DEFINER stored function whose body this login may not read/);
    expect(routine.message).toMatch(/GRANT SELECT ON mysql\.proc TO agent/);
    expect(routine.message).not.toMatch(/SHOW VIEW/);
  });
});

describe('a body or view definition that no reading reads whole', () => {
  const view = (body: string): Definition => ({ kind: 'VIEW', schema: 'shop', name: 'v', security: 'DEFINER', body });
  const unreadable = (definition: Definition) => judgeDefinition(definition).unreadable;

  it('is unreadable where a quote inside an optimizer hint hides the rest, whatever the quote', () => {
    for (const quote of ["'", '"', '`']) {
      const body = `BEGIN /*+ ${quote} */ KILL QUERY i; RETURN 1; END`;
      expect(unreadable(fn(body)), body).toEqual({
        rule: 'ambiguous-text',
        reason: expect.stringMatching(/quote inside an optimizer hint/),
      });
      // A DEFINER function reading every row behind it, and a view: the same.
      expect(unreadable(fn(`BEGIN /*+ ${quote} */ RETURN (SELECT count(*) FROM orders); END`))?.rule).toBe('ambiguous-text');
      expect(unreadable(view(`select /*+ ${quote} */ kill_q(1) AS k`))?.rule).toBe('ambiguous-text');
    }
  });

  it('is unreadable for every other text the lexer stops in: a hint in a versioned comment, mixed versions, nested executable comments', () => {
    for (const body of [
      "BEGIN /*!50000 /*+ ' */ */ KILL QUERY i; RETURN 1; END",
      'BEGIN /*!50000 SET @a = 1; */ /*!50100 KILL QUERY i; */ RETURN 1; END',
      'BEGIN /*! /*! KILL QUERY i; */ */ RETURN 1; END',
    ])
      expect(unreadable(fn(body))?.rule, body).toBe('ambiguous-text');
    expect(unreadable(fn('RETURN 1 /* x'))).toEqual({ rule: 'unterminated', reason: expect.stringMatching(/a \/\* comment/) });
    expect(unreadable(fn("RETURN 'x"))?.rule).toBe('unterminated');
    expect(unreadable(fn('RETURN `x'))?.rule).toBe('unterminated');
    expect(unreadable(fn('RETURN 1 /*! + 1'))?.rule).toBe('unterminated');
    expect(unreadable(fn('BEGIN /* \0 */ KILL QUERY i; RETURN 1; END'))?.rule).toBe('nul-character');
  });

  it('is read whole where one reading reads it whole: a reading that stops is not how the server parsed it', () => {
    // Created under NO_BACKSLASH_ESCAPES: the default reading ends inside a string, that one does not.
    expect(unreadable(fn("BEGIN DECLARE d VARCHAR(20) DEFAULT 'C:\\'; SET d = 'D:\\'; RETURN d; END"))).toBeUndefined();
    // A view's definition as the server prints it, read under NO_BACKSLASH_ESCAPES too.
    expect(unreadable(view("select 'it\\'s \\\\ x' AS `b`,'dq' AS `c`"))).toBeUndefined();
    // Comments the server reads as this check does: `-- ` and `#` end at a line feed only, `--x` is no comment.
    for (const body of ['RETURN 1 -- x\r+ 2', 'RETURN 1 # x\r\n+ 2', 'RETURN 1 --x', 'BEGIN /*+ NO_RANGE_OPTIMIZATION(t) */ RETURN 1; END'])
      expect(unreadable(fn(body)), JSON.stringify(body)).toBeUndefined();
    expect(does('BEGIN # note\r KILL QUERY i;\n RETURN 1; END')).toBeUndefined();
    expect(does('BEGIN -- note\r KILL QUERY i;\n RETURN 1; END')).toBeUndefined();
    expect(judgeDefinition(fn('RETURN 1 --g(1)')).reached.routines).toEqual([{ schema: undefined, name: 'g' }]);
    expect(judgeDefinition(fn('RETURN 1 -- g(1)')).reached.routines).toEqual([]);
  });

  it("is unreadable where only the reading of sql_mode MSSQL sees the hint: [a'] is a name there, a string opening elsewhere", () => {
    // Under every other reading kq(i) is inside a string; under MSSQL it follows the hint.
    const body = "BEGIN DECLARE x INT DEFAULT 1 [a'] /*+ \\' */ + 1 [\\'] + kq(i) + 2 [']; RETURN x; END";
    expect(unreadable(fn(body))?.rule).toBe('ambiguous-text');
  });

  it('refuses a statement one of whose readings of names stops where the server may read on, and passes the ones it reads whole', () => {
    // The statement check's readings put kq(5) inside a string and see no hint; sql_mode MSSQL runs kq(5).
    const sql = "SELECT 1 [a'] /*+ \\' */, 1 [\\'], kq(5) AS k, 2 ['] FROM dual";
    const reached = reachedBy(sql);
    expect(reached.unreadable).toEqual({ rule: 'ambiguous-text', reason: expect.stringMatching(/quote inside an optimizer hint/) });
    const refusal = statementUnreadableRefusal(reached.unreadable as NonNullable<typeof reached.unreadable>);
    expect(refusal.details).toMatchObject({ rule: 'ambiguous-text' });
    expect(refusal.message).toMatch(/sql_mode MSSQL.*a quote inside an optimizer hint.*cannot all be judged/);
    // A reading that ends inside a string is not the server's: with NO_BACKSLASH_ESCAPES, 'C:\' ends there.
    expect(reachedBy("SELECT 'C:\\', kq(1) FROM t").unreadable).toBeUndefined();
    expect(reachedBy("SELECT 'it\\'s', kq(1) FROM t").unreadable).toBeUndefined();
    expect(reachedBy('SELECT /*+ NO_RANGE_OPTIMIZATION(t) */ kq(1) FROM t [x]').unreadable).toBeUndefined();
  });

  it('is refused naming the routine or view, the way it was reached and the reason', () => {
    const body = "BEGIN /*+ ' */ KILL QUERY i; RETURN 1; END";
    const judged = judgeDefinition(fn(body));
    const refusal = unreadableRefusal(fn(body), ['the view shop.outer'], judged.unreadable as NonNullable<typeof judged.unreadable>);
    expect(refusal.code).toBe('STATEMENT_REFUSED');
    expect(refusal.details).toMatchObject({ rule: 'ambiguous-text' });
    expect(refusal.message).toMatch(/shop\.f\(\) \(reached through the view shop\.outer\)/);
    expect(refusal.message).toMatch(/body holds a quote inside an optimizer hint, which the database may read differently/);
    expect(refusal.message).toMatch(/cannot be judged/);
    const viewRefusal = unreadableRefusal(view("select /*+ ' */ 1"), [], {
      rule: 'unterminated',
      reason: 'text that ends inside a string literal',
    });
    expect(viewRefusal.message).toMatch(/the view shop\.v, whose definition holds text that ends inside a string literal/);
    expect(viewRefusal.details).toMatchObject({ rule: 'unterminated' });
  });
});

describe('a procedure a sql_mode ORACLE body calls by its name alone', () => {
  const routines = (body: string) => judgeDefinition(fn(body)).reached.routines.map((r) => `${r.schema ?? ''}.${r.name}`);

  // Each form checked on MariaDB 10.11: the procedure runs.
  it.each([
    ['AS BEGIN p_all; END', '.p_all'],
    ['as begin p_all; end', '.p_all'],
    ['AS BEGIN shop.p_all; END', 'shop.p_all'],
    ['AS BEGIN shop . p_all; END', 'shop.p_all'],
    ['AS BEGIN p_all(); END', '.p_all'],
    ['AS BEGIN "p_all"; END', '.p_all'],
    ['AS BEGIN `p_all`; END', '.p_all'],
    ['AS BEGIN p_all /* a note */ ; END', '.p_all'],
    ['AS BEGIN <<l>> p_all; END', '.p_all'],
    ['AS BEGIN <<l>> BEGIN p_all; END l; END', '.p_all'],
    ['AS BEGIN BEGIN p_all; END; END', '.p_all'],
    ['AS BEGIN BEGIN NOT ATOMIC p_all; END; END', '.p_all'],
    ['AS BEGIN DECLARE BEGIN p_all; END; END', '.p_all'],
    ['IS x INT; BEGIN x := 1; p_all; END', '.p_all'],
    ['AS BEGIN NULL; p_all; END', '.p_all'],
    ['AS BEGIN IF 1 = 1 THEN p_all; END IF; END', '.p_all'],
    ['AS BEGIN IF 1 = 0 THEN NULL; ELSIF 1 = 1 THEN p_all; END IF; END', '.p_all'],
    ['AS BEGIN IF 1 = 0 THEN NULL; ELSE p_all; END IF; END', '.p_all'],
    ['AS i INT := 0; BEGIN WHILE i < 1 LOOP p_all; i := i + 1; END LOOP; END', '.p_all'],
    ['AS BEGIN FOR i IN 1..2 LOOP p_all; END LOOP; END', '.p_all'],
    ['AS BEGIN LOOP p_all; EXIT; END LOOP; END', '.p_all'],
    ['AS BEGIN <<l>> LOOP p_all; EXIT l; END LOOP l; END', '.p_all'],
    ['AS BEGIN REPEAT p_all; UNTIL 1 END REPEAT; END', '.p_all'],
    ['AS BEGIN CASE 1 WHEN 1 THEN p_all; END CASE; END', '.p_all'],
    ['AS BEGIN RAISE no_data_found; EXCEPTION WHEN OTHERS THEN p_all; END', '.p_all'],
    ["AS CONTINUE HANDLER FOR SQLSTATE '45000', NOT FOUND p_all; BEGIN NULL; END", '.p_all'],
    ['AS CONTINUE HANDLER FOR SQLEXCEPTION p_all; BEGIN NULL; END', '.p_all'],
    // A keyword the grammar takes as a name there, and any word before a dot.
    ['AS BEGIN text(); END', '.text'],
    ['AS BEGIN deallocate; END', '.deallocate'],
    ['AS BEGIN execute; END', '.execute'],
    ['AS BEGIN elseif; END', '.elseif'],
    ['AS BEGIN end.p_all; END', 'end.p_all'],
    ['AS BEGIN `commit`; END', '.commit'],
  ])('%s calls %s', (body, name) => {
    expect(routines(body)).toContain(name);
  });

  it('takes a qualified one as a possible member of a package, as CALL does', () => {
    expect(judgeDefinition(fn('AS BEGIN pk.p; shop.pk2.q; END')).reached.packages).toEqual([
      { schema: undefined, name: 'pk' },
      { schema: 'shop', name: 'pk2' },
    ]);
  });

  // Statements of their own (each checked on 10.11), assignments, labels and expressions are no calls.
  it.each([
    'AS BEGIN COMMIT; ROLLBACK; NULL; RETURN; END',
    'AS BEGIN LOOP EXIT; CONTINUE; END LOOP; END',
    'AS BEGIN NULL; EXCEPTION WHEN OTHERS THEN RAISE; END',
    'AS a INT; BEGIN a := 1; END',
    'AS r t%ROWTYPE; BEGIN r.a := 1; END',
    'AS BEGIN <<l>> LOOP EXIT l; END LOOP l; END',
    'AS BEGIN <<l>> REPEAT NULL; UNTIL 1 END REPEAT l; END',
    'AS a INT; BEGIN SELECT 1 AS a INTO a; DO a; END',
    'RETURN CASE WHEN a THEN b ELSE c END',
    'BEGIN DECLARE x INT; SELECT CASE WHEN 1 THEN x ELSE x END INTO x; RETURN x; END',
  ])('%s calls nothing', (body) => {
    expect(routines(body)).toEqual([]);
  });
});

describe('a body that runs SQL text it builds', () => {
  const runs = (body: string) => judgeDefinition(fn(body)).reached.runsText;

  it.each([
    ["AS BEGIN EXECUTE IMMEDIATE 'CALL p_all'; END", 'EXECUTE IMMEDIATE'],
    ["BEGIN EXECUTE IMMEDIATE CONCAT('CALL ', 'p_all'); END", 'EXECUTE IMMEDIATE'],
    ['BEGIN PREPARE s FROM @q; EXECUTE s; END', 'PREPARE'],
    ['AS BEGIN IF 1 = 1 THEN EXECUTE s USING 1; END IF; END', 'EXECUTE'],
    ["AS BEGIN <<l>> EXECUTE IMMEDIATE 'SELECT 1'; END", 'EXECUTE IMMEDIATE'],
  ])('%s: the routines it calls cannot be named (%s)', (body, what) => {
    expect(runs(body)).toBe(what);
  });

  it('is refused on read-only calls as not a read', () => {
    expect(does("AS BEGIN EXECUTE IMMEDIATE 'CALL p_all'; END")).toBeDefined();
  });

  it.each([
    'AS BEGIN execute; END',
    'AS BEGIN prepare(); END',
    'AS BEGIN shop.execute; END',
    'AS x INT; BEGIN SELECT execute INTO x FROM t; END',
    'RETURN (SELECT prepare FROM t)',
  ])('%s runs no SQL text', (body) => {
    expect(runs(body)).toBeUndefined();
  });
});

describe('a sql_mode ORACLE body, whose leading AS is no read', () => {
  const body = "AS keep VARCHAR(64); BEGIN keep := @mcp_customer_id; SET @mcp_customer_id = '2'; SELECT item INTO @stolen FROM mine; END";

  it('is still judged for what each later statement assigns, where rows are separated on a writable connection', () => {
    const judged = judgeDefinition({ ...fn(body), kind: 'PROCEDURE' });
    expect(judged.does).toMatch(/AS/);
    expect(judged.setsContext).toBe('@mcp_customer_id');
    expect(judged.changesSession).toBe('@mcp_customer_id');
  });

  it('names what a later statement assigns after an earlier one that is no read, in any body', () => {
    const judged = judgeDefinition(fn('BEGIN UPDATE t SET a = 1; SELECT item INTO @stolen FROM mine; RETURN 1; END'));
    expect(judged.does).toBeDefined();
    expect(judged.changesSession).toBe('@stolen');
  });
});

describe('the triggers a write fires', () => {
  const trigger = (body: string | null): Definition => ({
    kind: 'TRIGGER',
    schema: 'shop',
    name: 'tr',
    security: 'DEFINER',
    body,
    table: 'shop.notes',
  });

  it('asks for the triggers on a relation a write may write, whether it is an updatable view, and whether a key may reference it', () => {
    const query = definitionsQuery([
      { kind: 'writes', name: { schema: undefined, name: 'notes' } },
      { kind: 'writes', name: { schema: 'shop', name: 'v' } },
    ]);
    const branches = query.sql.split('\nUNION ALL\n');
    expect(branches).toHaveLength(6);
    expect(branches[0]).toMatch(
      /^SELECT 0 AS i, 'TRIGGER' AS kind, .*ACTION_STATEMENT AS body FROM information_schema\.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = DATABASE\(\) AND EVENT_OBJECT_TABLE = \?$/,
    );
    expect(branches[1]).toMatch(
      /^SELECT 0 AS i, 'UPDATABLE VIEW' AS kind, .*TABLE_SCHEMA = DATABASE\(\) AND TABLE_NAME = \? AND COALESCE\(IS_UPDATABLE, ''\) <> 'NO' AND COALESCE\(ALGORITHM, ''\) <> 'TEMPTABLE'$/,
    );
    expect(branches[2]).toMatch(
      /^SELECT 0 AS i, 'KEYED INNODB' AS kind, .*t\.TABLE_SCHEMA = DATABASE\(\) AND t\.TABLE_NAME = \? AND t\.ENGINE = 'InnoDB' AND EXISTS \(SELECT 1 FROM information_schema\.STATISTICS /,
    );
    expect(branches[3]).toMatch(/EVENT_OBJECT_SCHEMA = \? AND EVENT_OBJECT_TABLE = \?$/);
    expect(branches[4]).toMatch(
      /TABLE_SCHEMA = \? AND TABLE_NAME = \? AND COALESCE\(IS_UPDATABLE, ''\) <> 'NO' AND COALESCE\(ALGORITHM, ''\) <> 'TEMPTABLE'$/,
    );
    expect(branches[5]).toMatch(/t\.TABLE_SCHEMA = \? AND t\.TABLE_NAME = \? AND t\.ENGINE = 'InnoDB'/);
    expect(query.values).toEqual(['notes', 'notes', 'notes', 'shop', 'v', 'shop', 'v', 'shop', 'v']);
  });

  it('reads DELETE, UPDATE, REPLACE and ON DUPLICATE KEY UPDATE as changing rows, not REPLACE() or FOR UPDATE', () => {
    for (const sql of [
      'DELETE FROM t',
      'update t set a = 1',
      'REPLACE INTO t VALUES (1)',
      'INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE a = 2',
      // The server reads an executable comment's text as code, its version's digits glued to the keyword.
      '/*!100000DELETE*/ FROM t WHERE id = 2',
      '/*M!100000DELETE*/ FROM t WHERE id = 2',
      '/*!50000REPLACE*/ INTO t VALUES (3)',
      '/*!100000UPDATE*/ t SET id = 4',
      'DELETE/*!100000*/FROM t',
      // A comment is no token: the FOR before it does not make the UPDATE a locking read.
      '# FOR\nUPDATE t SET id = 40 WHERE id = 4',
      '-- FOR\nUPDATE t SET id = 40',
      '/* FOR */ UPDATE t SET id = 40',
      'INSERT INTO t VALUES (1) ON DUPLICATE KEY -- FOR\nUPDATE id = 10',
      'INSERT INTO t VALUES (1) ON DUPLICATE KEY /*!100000UPDATE*/ id = 10',
      'SELECT 1 FROM t /*!100000FOR*/ UPDATE t SET id = 1',
      // SET STATEMENT ... FOR runs the statement after FOR: an UPDATE there changes rows.
      'SET STATEMENT innodb_lock_wait_timeout=5 FOR UPDATE t SET id = NEW.new_id WHERE id = NEW.old_id',
      'SET STATEMENT max_statement_time=1 FOR\nUPDATE t SET id = 1',
      'BEGIN SET /* x */ STATEMENT a=1 FOR UPDATE t SET id = 1; END',
    ])
      expect(changesRows(sql), sql).toBe(true);
    for (const sql of [
      'INSERT INTO t VALUES (1)',
      "SELECT REPLACE(a, 'x', 'y') FROM t",
      'SELECT * FROM t FOR UPDATE',
      'SELECT updated_at FROM t',
    ])
      expect(changesRows(sql), sql).toBe(false);
  });

  it("judges a trigger's body as a DEFINER routine's: what it reads, calls and assigns", () => {
    const reads = judgeDefinition(trigger("SET NEW.txt = CONCAT(NEW.txt, ' / ', (SELECT item FROM orders WHERE id = NEW.order_id))"));
    expect(reads.readsTables).toBe(true);
    expect(reads.reached.relations).toContainEqual({ schema: undefined, name: 'orders' });
    expect(judgeDefinition(trigger('SET NEW.txt = leak(NEW.order_id)')).reached.routines).toContainEqual({
      schema: undefined,
      name: 'leak',
    });
    expect(judgeDefinition(trigger("SET @mcp_customer_id = '2'")).setsContext).toBe('@mcp_customer_id');
    expect(judgeDefinition(trigger('BEGIN SET @seen = NEW.id; END')).changesSession).toBe('@seen');
    expect(judgeDefinition(trigger('SET sql_mode = 1')).changesSession).toBe('sql_mode');
  });

  it("passes a trigger that sets the row's own columns and reads nothing", () => {
    const judged = judgeDefinition(trigger('BEGIN SET NEW.created = NOW(), NEW.txt = UPPER(OLD.txt); END'));
    expect(judged).toMatchObject({ readsTables: false });
    expect(judged.changesSession).toBeUndefined();
    expect(judged.setsContext).toBeUndefined();
    // Outside a trigger, NEW is no row: `SET new.x` is not taken as one.
    expect(judgeDefinition(fn('BEGIN SET NEW.x = 1; RETURN 1; END')).changesSession).toBe('NEW');
  });

  it('names the trigger, its table and the grant that lets the login read it', () => {
    expect(shownName(trigger('x'))).toBe('the trigger shop.tr on shop.notes');
    const hidden = hiddenDefinitionRefusal(trigger(null), [], 'agent');
    expect(hidden.message).toMatch(
      /writes shop\.notes and so runs the trigger shop\.tr on shop\.notes, whose body this login may not read/,
    );
    expect(hidden.message).toMatch(/GRANT TRIGGER ON shop\.notes TO agent/);
    expect(updatableViewRefusal({ schema: 'shop', name: 'v' }, []).message).toMatch(/updatable view shop\.v/);
  });
});

describe('a body stored under sql_mode ORACLE or MSSQL, where the call carries context values', () => {
  const trigger = (body: string, sqlMode?: string): Definition => ({
    kind: 'TRIGGER',
    schema: 'sand',
    name: 'tr',
    security: 'DEFINER',
    body,
    table: 'sand.leak3',
    ...(sqlMode === undefined ? {} : { sqlMode }),
  });
  const oracle =
    'PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ORACLE,NO_KEY_OPTIONS,NO_TABLE_OPTIONS,NO_FIELD_OPTIONS,NO_AUTO_CREATE_USER,SIMULTANEOUS_ASSIGNMENT';
  const mssql = 'PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,MSSQL,NO_KEY_OPTIONS,NO_TABLE_OPTIONS,NO_FIELD_OPTIONS';
  const reviewers =
    "BEGIN IF NEW.a = 0 THEN NULL; ELSIF NEW.a = 1 THEN SET @mcp_customer_id = 'C2'; END IF; IF NEW.a = 0 THEN NULL; ELSIF NEW.a = 3 THEN SET @mcp_customer_id = 'C1'; END IF; END";

  it('names the mode a trigger or routine was stored under when its grammar or names read otherwise', () => {
    expect(judgeDefinition(trigger(reviewers, oracle)).storedMode).toBe('ORACLE');
    expect(judgeDefinition(trigger('SET NEW.b = 1', mssql)).storedMode).toBe('MSSQL');
    expect(judgeDefinition({ ...fn('AS BEGIN RETURN 1; END'), sqlMode: oracle }).storedMode).toBe('ORACLE');
    for (const mode of ['', 'STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION', 'ANSI_QUOTES', 'PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ANSI'])
      expect(judgeDefinition(trigger('SET NEW.b = 1', mode)).storedMode, mode).toBeUndefined();
    expect(judgeDefinition(trigger('SET NEW.b = 1')).storedMode).toBeUndefined();
    // The server's record of each routine and trigger carries the mode it was stored under.
    const query = definitionsQuery([
      { kind: 'writes', name: { schema: 'sand', name: 'leak3' } },
      { kind: 'routine', name: { schema: 'sand', name: 'f' } },
    ]);
    expect(query.sql).toMatch(/SQL_MODE AS mode, ACTION_STATEMENT AS body FROM information_schema\.TRIGGERS/);
    expect(query.sql).toMatch(/SQL_MODE AS mode, ROUTINE_DEFINITION AS body FROM information_schema\.ROUTINES/);
    expect(definitionsQuery([{ kind: 'routine', name: { schema: 'sand', name: 'f' } }], { routinesAsOne: true }).sql).toMatch(
      /r\.SQL_MODE AS mode/,
    );
    const refused = storedModeRefusal(trigger(reviewers, oracle), [], 'ORACLE');
    expect(refused.message).toMatch(/the trigger sand\.tr on sand\.leak3.*sql_mode=ORACLE/);
  });

  it.each([
    ["the reviewer's trigger", reviewers],
    ['a <<label>> before SET', "BEGIN <<l>> SET @mcp_customer_id = 'C2'; END"],
    ['FOR ... LOOP', "BEGIN FOR i IN 1..1 LOOP SET @mcp_customer_id = 'C2'; END LOOP; END"],
    ['WHILE ... LOOP', "BEGIN WHILE NEW.a > 100 LOOP SET @mcp_customer_id = 'C2'; END LOOP; END"],
    ['EXCEPTION WHEN ... THEN', "BEGIN NULL; EXCEPTION WHEN OTHERS THEN SET @mcp_customer_id = 'C2'; END"],
    ['a quoted name', "BEGIN <<l>> SET @`mcp_customer_id` = 'C2'; END"],
    ['a single-quoted name', "BEGIN <<l>> SET @'MCP_customer_id' = 'C2'; END"],
    ['a double-quoted name', 'BEGIN <<l>> SET @"mcp_customer_id" = \'C2\'; END'],
    ['INTO in a loop', "BEGIN WHILE NEW.a > 100 LOOP SELECT 'C2' INTO @mcp_customer_id; END LOOP; END"],
    ['an INTO list in a loop', "BEGIN FOR i IN 1..1 LOOP SELECT 1, 'C2' INTO @x, @mcp_customer_id; END LOOP; END"],
    [':= in a loop', "BEGIN FOR i IN 1..1 LOOP SELECT @mcp_customer_id := 'C2'; END LOOP; END"],
    ['CALL with an OUT argument in a loop', 'BEGIN <<l>> CALL p(1, @mcp_customer_id); END'],
  ])('refuses %s as assigning the context value, whatever reading finds the statement start', (_what, body) => {
    expect(judgeDefinition(trigger(body)).setsContext).toMatch(/^@.?mcp_customer_id.?$/i);
  });

  it.each([
    ['a SET list', "BEGIN <<l>> SET @x = 1, @mcp_customer_id = 'C2'; END"],
    ['a top-level select list', "BEGIN <<l>> SELECT 1, @mcp_customer_id = 'C2'; END"],
    ['after THEN', "BEGIN SET NEW.b = CASE WHEN 1 THEN @mcp_customer_id = 'C2' END; END"],
    ['GET DIAGNOSTICS', 'BEGIN <<l>> GET DIAGNOSTICS @mcp_customer_id = ROW_COUNT; END'],
  ])('refuses %s, where an assignment cannot be told from a comparison', (_what, body) => {
    const judged = judgeDefinition(trigger(body));
    expect(judged.setsContext ?? judged.mayAssignContext, body).toMatch(/^@mcp_customer_id$/i);
    if (judged.mayAssignContext)
      expect(mayAssignContextRefusal(trigger(body), [], judged.mayAssignContext).message).toMatch(/value = @mcp_customer_id/);
  });

  it.each([
    'RETURN @mcp_customer_id',
    'SET NEW.customer = @mcp_customer_id',
    "BEGIN IF @mcp_customer_id = 'C1' THEN SET NEW.b = 1; ELSEIF NOT @mcp_customer_id = 'C2' THEN SET NEW.b = 2; END IF; END",
    "SET NEW.b = (SELECT count(*) FROM t WHERE @mcp_customer_id = t.c AND (@mcp_customer_id = 'x' OR 1 = @mcp_customer_id))",
    'SET NEW.b = IF(@mcp_customer_id = 1, CONCAT(NEW.b, @mcp_customer_id = 2), 0)',
    'SET NEW.b = (SELECT a, @mcp_customer_id FROM t)',
    // A comma inside parentheses separates a subquery's columns or a call's arguments, never SET targets.
    "SET NEW.b = (SELECT 1, @mcp_customer_id = 'C2')",
    "SET NEW.b = f(NEW.a, @mcp_customer_id = 'C2')",
    'BEGIN DECLARE v INT; SELECT a INTO v FROM t ORDER BY a, @mcp_customer_id; END',
  ])('passes a body that only reads the context value: %s', (body) => {
    const judged = judgeDefinition(trigger(body));
    expect(judged.setsContext).toBeUndefined();
    expect(judged.mayAssignContext).toBeUndefined();
  });
});

describe('a stored function with an OUT or INOUT parameter, where the call carries context values', () => {
  it("asks the server's record of parameters which of the functions reached declare one", () => {
    const query = outParametersQuery([
      { schema: 'shop', name: 'setsel' },
      { schema: 'shop', name: 'peeks' },
    ]);
    expect(query?.sql).toMatch(
      /FROM information_schema\.PARAMETERS WHERE ROUTINE_TYPE = 'FUNCTION' AND PARAMETER_MODE IN \('OUT', 'INOUT'\)/,
    );
    expect(query?.sql).toMatch(/\(SPECIFIC_SCHEMA = \? AND SPECIFIC_NAME = \?\) OR \(SPECIFIC_SCHEMA = \? AND SPECIFIC_NAME = \?\)/);
    expect(query?.values).toEqual(['shop', 'setsel', 'shop', 'peeks']);
    expect(outParametersQuery([])).toBeUndefined();
  });

  it('is refused naming the function, the parameter and the way it was reached', () => {
    const error = outParameterRefusal(fn('BEGIN SELECT v INTO x; RETURN 1; END'), ['shop.peeks()'], 'x', 'OUT');
    expect(error.details).toMatchObject({ rule: 'session-change' });
    expect(error.message).toMatch(
      /^Refused: the statement runs shop\.f\(\) \(reached through shop\.peeks\(\)\), a stored function with the OUT parameter x, which writes back into the variable its caller passes there/,
    );
    expect(error.message).toMatch(/@mcp_/);
  });
});

"""Hostile SQL for the read-only guard (models/public_data/sql/guard.py): a deterministic generator and a runner.

`hostile_cases(n, seed)` draws `n` statements, each with its family, from a seeded `random.Random`: writes (also
behind a CTE, a comment or a `;`), ATTACH/DETACH, PRAGMA (also table-valued), several statements, VACUUM INTO,
recursive CTEs, huge cross joins, forbidden functions (`randomblob`, `printf`, `load_extension`, `readfile`,
`sqlite_*`, ...), reads of `sqlite_master` and of the store's internal tables, very long or deeply nested text,
NUL characters, unicode junk and unbalanced quotes, strings doubled until they hit the size limit, functions that
are quadratic inside one call (`instr`, `replace`, `trim` with a character set), huge LIKE patterns, mutations of
valid statements, and about 20 % valid read-only statements over the typed tables so that some succeed.
`hostile_statements(n, seed)` is the statements alone. Importing the module does nothing else.

`run_statements(guard, cases)` (evaluation/acceptance/hostile_sql_run.py) runs every statement through `guard.run`, catching what escapes it, and returns
`FuzzFigures`; `store_state(path)` is what must not change (the file's sha256, its `sqlite_master`). The tests
(tests/public_data/test_sql_guard.py) and `fuzz_guard` (a whole fuzz run over a fresh store, the library of
scripts/fuzz_sql_guard.py) assert on both.
"""
from __future__ import annotations

import random
from pathlib import Path

from evaluation.acceptance.hostile_sql_parts import (INTERNAL, KEYWORDS, NUMERIC, TEXT, TYPED, WRITES, condition_on, cross_tables,
                                          doubled, sized, table_of)


def valid(rng: random.Random, scratch: str = "") -> str:
    """A read-only statement over the typed tables that should run."""
    t = table_of(rng)
    col, num = rng.choice(TYPED[t]), rng.choice(NUMERIC[t])
    text = rng.choice(TEXT[t]) if TEXT[t] else col
    forms = (
        f"SELECT count(*) FROM {t}",
        f"SELECT count(*) FROM {t} WHERE {condition_on(rng, t)}",
        f"SELECT {col} FROM {t} WHERE {condition_on(rng, t)} ORDER BY {col} {rng.choice(('ASC', 'DESC'))} LIMIT "
        f"{rng.randint(1, 20)}",
        f"SELECT {text}, count(*) FROM {t} GROUP BY {text} ORDER BY 2 DESC LIMIT {rng.randint(1, 10)}",
        f"SELECT avg({num}), max({num}), min({num}), sum({num}), total({num}) FROM {t}",
        f"SELECT * FROM {t}",
        f"SELECT * FROM {t} WHERE {condition_on(rng, t)} AND {condition_on(rng, t)}",
        f"SELECT count(DISTINCT {col}) FROM {t} WHERE {condition_on(rng, t)} OR {condition_on(rng, t)}",
        "SELECT m.title, c.person FROM movies m JOIN movie_credits c ON c.title = m.title WHERE c.job = 'director'",
        "SELECT title FROM movies WHERE rating > (SELECT avg(rating) FROM movies) ORDER BY rating DESC",
        "WITH top AS (SELECT title, revenue FROM movies ORDER BY revenue DESC LIMIT 5) SELECT title FROM top",
        "SELECT group_concat(genre, ', ') FROM movie_genres WHERE title = 'Inception'",
        "SELECT upper(title), length(title), substr(release_date, 1, 4) FROM movies LIMIT 3",
        "SELECT count(*) FROM oscar_nominations WHERE nominee = 'a;b'",
        f"SELECT count(*) FROM {t} -- how many rows; DROP TABLE movies",
        f"SELECT count(*) FROM {t};",
        f"select {col} from {t} where {condition_on(rng, t)} limit 5",
        "SELECT title, CASE WHEN revenue > budget THEN 'hit' ELSE 'flop' END FROM movies",
        "SELECT category, sum(won) FROM oscar_nominations GROUP BY category HAVING count(*) > 1",
        "SELECT name, round(market_cap / 1e9, 1) FROM companies ORDER BY market_cap DESC LIMIT 5",
        "SELECT strftime('%Y', release_date), count(*) FROM movies GROUP BY 1",
        "SELECT title FROM movies WHERE title IN (SELECT title FROM movie_genres WHERE genre = 'Drama')",
        "SELECT iif(count(*) > 3, 'many', 'few'), coalesce(max(rating), 0) FROM movies",
        "SELECT title FROM movies UNION SELECT film FROM oscar_nominations ORDER BY 1 LIMIT 10",
        "SELECT count(*) FROM movies a, movies b",
        "SELECT instr(title, 'the'), replace(title, ' ', '_'), trim('  x  '), ltrim(title), rtrim(title) FROM movies",
    )
    return rng.choice(forms)


def writes(rng: random.Random, scratch: str = "") -> str:
    t = rng.choice(tuple(TYPED) + INTERNAL[:11])
    col = rng.choice(TYPED.get(t, ("key", "text", "id")))
    write = rng.choice((
        f"INSERT INTO {t} DEFAULT VALUES", f"INSERT INTO {t} SELECT * FROM {t}",
        "INSERT INTO movies(title) VALUES ('x') RETURNING *", f"UPDATE {t} SET {col} = NULL",
        "UPDATE movies SET rating = 10 WHERE title = 'Inception' RETURNING title", f"DELETE FROM {t}",
        f"DELETE FROM {t} WHERE rowid > 0", f"REPLACE INTO {t} SELECT * FROM {t} LIMIT 1",
        "INSERT OR REPLACE INTO meta VALUES ('schema_version', '0')", f"DROP TABLE {t}", f"DROP TABLE IF EXISTS {t}",
        "DROP INDEX records_year", "DROP VIEW v", "CREATE TABLE x(a)", "CREATE TEMP TABLE x AS SELECT * FROM movies",
        "CREATE INDEX i ON movies(title)", "CREATE VIEW v AS SELECT * FROM meta",
        "CREATE TEMP VIEW v AS SELECT * FROM records",
        "CREATE TRIGGER tr AFTER INSERT ON movies BEGIN DELETE FROM movies; END",
        "CREATE VIRTUAL TABLE f USING fts5(x)", f"ALTER TABLE {t} RENAME TO x", f"ALTER TABLE {t} ADD COLUMN z",
        f"ALTER TABLE {t} DROP COLUMN {col}", f"ALTER TABLE {t} RENAME COLUMN {col} TO y", "BEGIN",
        "BEGIN IMMEDIATE", "COMMIT", "ROLLBACK", "SAVEPOINT s", "RELEASE s", "REINDEX", "ANALYZE", "VACUUM",
        "INSERT INTO movies(title) SELECT title FROM movies ON CONFLICT DO NOTHING",
        "UPDATE movies SET title = title || title"))
    dml = write.split()[0] in ("INSERT", "UPDATE", "DELETE", "REPLACE")
    wrap = rng.randrange(10)
    if wrap == 0 and dml:
        return f"WITH x AS (SELECT 1) {write}"
    if wrap == 1 and dml:
        return f"WITH x AS (SELECT title FROM movies) {write}"
    if wrap == 2:
        return f"/* just a select */ {write}"
    if wrap == 3:
        return f"-- SELECT count(*) FROM movies\n{write}"
    if wrap == 4:
        return f"SELECT 1; {write}"
    if wrap == 5:
        return f"{valid(rng)}; {write};"
    if wrap == 6:
        return rng.choice(("WITH x AS ({w} RETURNING *) SELECT * FROM x", "SELECT * FROM ({w} RETURNING *)",
                           "SELECT count(*) FROM movies WHERE EXISTS ({w})")).format(w=write)
    if wrap == 7:
        return f"  \n\t{write.lower()}"
    return write


def attach(rng: random.Random, scratch: str = "") -> str:
    path = f"{scratch}/attached_{rng.randrange(3)}.sqlite"
    return rng.choice((
        "ATTACH ':memory:' AS m", "ATTACH DATABASE ':memory:' AS m2", f"ATTACH DATABASE '{path}' AS a",
        f"ATTACH 'file:{path}?mode=rwc' AS a", "ATTACH '' AS e", "DETACH main", "DETACH DATABASE temp",
        "SELECT 1; ATTACH ':memory:' AS m", f"SELECT count(*) FROM movies; ATTACH '{path}' AS a",
        f"WITH x AS (SELECT 1) ATTACH '{path}' AS a", "SELECT * FROM m.movies", "SELECT * FROM aux.movies",
        f"/* */ ATTACH '{path}' AS a; CREATE TABLE a.t(x)", f"select 1; attach database '{path}' as z; select 2",
        "SELECT sqlite_attach('x', 'y', NULL)"))


def pragma(rng: random.Random, scratch: str = "") -> str:
    return rng.choice((
        "PRAGMA query_only=0", "PRAGMA query_only = OFF", "PRAGMA main.query_only = false",
        "PRAGMA writable_schema=ON", "PRAGMA writable_schema = RESET", "PRAGMA journal_mode=WAL",
        "PRAGMA journal_mode=DELETE", "PRAGMA main.locking_mode=EXCLUSIVE", "PRAGMA temp_store=MEMORY",
        "PRAGMA user_version=7", "PRAGMA schema_version=1", "PRAGMA table_info(meta)", "PRAGMA database_list",
        "PRAGMA compile_options", "PRAGMA integrity_check", "PRAGMA wal_checkpoint(TRUNCATE)",
        "PRAGMA mmap_size=1000000000", "PRAGMA cache_size=-1000000", "PRAGMA trusted_schema=ON",
        "PRAGMA hard_heap_limit=1", f"PRAGMA temp_store_directory='{scratch}'", "PRAGMA data_version",
        "SELECT * FROM pragma_table_info('meta')", "SELECT name FROM pragma_table_list",
        "SELECT * FROM pragma_database_list", "SELECT * FROM pragma_function_list", "SELECT * FROM pragma_query_only",
        "SELECT * FROM pragma_compile_options", "SELECT * FROM pragma_index_list('records')",
        "SELECT * FROM movies, pragma_table_info('movies')", "SELECT * FROM pragma_query_only(0)",
        "SELECT * FROM pragma_writable_schema(1)", "SELECT count(*) FROM movies; PRAGMA query_only=0",
        "SELECT (SELECT count(*) FROM pragma_table_list) FROM movies",
        "WITH p AS (SELECT * FROM pragma_table_info('records')) SELECT * FROM p", "pragma QUERY_ONLY=no"))


def several(rng: random.Random, scratch: str = "") -> str:
    first, second = valid(rng), rng.choice(WRITES + ("SELECT 2", valid(rng)))
    return rng.choice((
        f"{first}; {second}", f"SELECT ';' ; {second}", f"SELECT 'a;b'; {second}", f"SELECT 1 /* ; */ ; {second}",
        f"SELECT 1 -- ;\n; {second}", f'SELECT "a;b" FROM movies; {second}', f"SELECT [x;y] FROM movies; {second}",
        "SELECT 1;;", "SELECT 1;;;", ";SELECT 1", f"SELECT 1;\n--\n{second}", f"{first};/* trailing */",
        f"{first}; -- only a comment after", f"{first} ;   ", f"{first};\n{first}", f"SELECT 'it''s;'; {second}",
        f"SELECT 1 /* unterminated ; {second}", f"SELECT 1 ' ; {second}", f"{first}\n;\n{second}\n;",
        f"{first}; /* */ ; {second}", f"SELECT 1; BEGIN; {second}; COMMIT", f"/* a count; not a write */ {first};",
        f"-- a count; not a write\n{first}"))


def vacuum(rng: random.Random, scratch: str = "") -> str:
    path = f"{scratch}/copy_{rng.randrange(3)}.sqlite"
    return rng.choice((f"VACUUM INTO '{path}'", f"VACUUM main INTO '{path}'", f"SELECT 1; VACUUM INTO '{path}'",
                       f"WITH a AS (SELECT 1) VACUUM INTO '{path}'", f"vacuum into 'file:{path}?mode=rwc'",
                       f"/* c */ VACUUM INTO '{path}'", f"SELECT count(*) FROM movies;\nVACUUM INTO '{path}';"))


def recursive(rng: random.Random, scratch: str = "") -> str:
    big = rng.choice(("1000000000", "1e9", "9223372036854775807"))
    return rng.choice((
        f"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < {big}) SELECT count(*) FROM c",
        "WITH c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT max(x) FROM c",
        f"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT {big}) SELECT sum(x) FROM c",
        "WITH RECURSIVE c(x, s) AS (SELECT 1, 'a' UNION ALL SELECT x+1, s||s FROM c) SELECT max(length(s)) FROM c",
        f"WITH RECURSIVE c(x) AS (SELECT 1 UNION SELECT x+1 FROM c WHERE x < {big}) SELECT x FROM c ORDER BY x DESC",
        f"SELECT title FROM movies WHERE rating IN (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c "
        f"WHERE x < {big}) SELECT x FROM c)",
        "WITH RECURSIVE c(x) AS (SELECT title FROM movies UNION ALL SELECT x || x FROM c) SELECT count(*) FROM c",
        # not recursive but exponential: each level cross joins the one before
        "WITH a(x) AS (VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10)), b AS (SELECT 1 FROM a, a a2), "
        "c AS (SELECT 1 FROM b, b b2), d AS (SELECT 1 FROM c, c c2), e AS (SELECT 1 FROM d, d d2) "
        "SELECT count(*) FROM e",
        "WITH a AS (SELECT * FROM movie_credits), b AS (SELECT 1 FROM a, a a2, a a3), c AS (SELECT 1 FROM b, b b2) "
        "SELECT count(*) FROM c"))


def cross_join(rng: random.Random, scratch: str = "") -> str:
    k = rng.randint(6, 10)
    frm, aliases = cross_tables(rng, k, same=rng.random() < 0.5)
    (a0, t0), (a1, t1) = aliases[0], aliases[1]
    c0, c1 = rng.choice(TYPED[t0]), rng.choice(TYPED[t1])
    return rng.choice((
        f"SELECT count(*) FROM {frm}", f"SELECT {a0}.{c0} FROM {frm} ORDER BY random()",
        f"SELECT {a0}.{c0} FROM {frm} ORDER BY {a0}.{c0} || {a1}.{c1}", f"SELECT DISTINCT {a0}.{c0} FROM {frm}",
        f"SELECT {a0}.{c0} FROM {frm} ORDER BY 1 LIMIT 1", f"SELECT group_concat({a0}.{c0}) FROM {frm}",
        f"SELECT max(length({a0}.{c0} || {a1}.{c1})) FROM {frm}",
        f"SELECT count(DISTINCT {a0}.{c0} || {a1}.{c1}) FROM {frm}",
        f"SELECT {a0}.{c0} FROM {frm} WHERE {a0}.{c0} LIKE '%a%e%i%o%u%' ORDER BY {a1}.{c1} DESC",
        f"SELECT (SELECT count(*) FROM {frm})", f"SELECT * FROM {frm} ORDER BY random() LIMIT 1",
        f"SELECT {a0}.{c0}, count(*) FROM {frm} GROUP BY {a0}.{c0}",
        "SELECT count(*) FROM " + " CROSS JOIN ".join([t0] * k), "SELECT count(*) FROM "
        + " NATURAL JOIN ".join([t0] * k)))


def functions(rng: random.Random, scratch: str = "") -> str:
    call = rng.choice((
        "randomblob(1e9)", "randomblob(1000000000)", "hex(randomblob(500000000))", "zeroblob(1e9)",
        "length(zeroblob(2147483647))", "printf('%.*c', 1000000000, 'x')", "printf('%1000000000d', 1)",
        "format('%.*c', 1e9, 'x')", "load_extension('/tmp/x.so')", "load_extension('libc.so.6', 'system')",
        "readfile('/etc/passwd')", f"writefile('{scratch}/written.txt', 'x')", "edit('x', 'vi')",
        "sqlite_version()", "sqlite_source_id()", "sqlite_compileoption_get(0)",
        "sqlite_compileoption_used('THREADSAFE')", "sqlite_offset(title)", "random()", "changes()",
        "total_changes()", "last_insert_rowid()", "char(65)", "unicode('a')", "quote(x'00')", "hex('a')",
        "json('{}')", "json_extract('{\"a\":1}', '$.a')", "fts3_tokenizer('simple')", "soundex('x')",
        "likelihood(1, 0.5)", "unlikely(1)", "typeof(1)", "total_changes()", "sqlite_rename_table(1,2,3,4,5,6,7)",
        "unhex('00')", "sqlite_log(1, 'x')", "fts5_source_id()", "highlight(entity_fts, 0, '[', ']')",
        "match('a', 'b')", "rtreecheck('x')", "sqlite_drop_column(1, 'x', 2)"))
    return rng.choice((f"SELECT {call}", f"SELECT {call} FROM movies", f"SELECT title FROM movies WHERE {call}",
                       f"SELECT title FROM movies ORDER BY {call}", f"SELECT count({call}) FROM movies a, movies b",
                       "SELECT * FROM generate_series(1, 1000000000)", "SELECT * FROM json_each('[1,2,3]')",
                       "SELECT * FROM sqlite_dbpage", f"SELECT * FROM zipfile('{scratch}/x.zip')",
                       f"WITH f AS (SELECT {call} AS v) SELECT v FROM f"))


def internal(rng: random.Random, scratch: str = "") -> str:
    x = rng.choice(INTERNAL)
    return rng.choice((
        f"SELECT * FROM {x}", f"SELECT count(*) FROM {x}", f"SELECT title FROM movies WHERE title IN "
        f"(SELECT name FROM {x})", f"SELECT EXISTS (SELECT 1 FROM {x})",
        f"WITH s AS (SELECT * FROM {x}) SELECT * FROM s",
        f"SELECT * FROM movies JOIN {x}", "SELECT (SELECT group_concat(sql) FROM sqlite_master)",
        "SELECT * FROM entity_fts WHERE entity_fts MATCH 'nolan'", f"SELECT * FROM movies m, {x} AS movies",
        "SELECT sql FROM sqlite_master WHERE name = 'meta'", f"SELECT title FROM movies UNION SELECT * FROM {x}",
        f"SELECT * FROM movies WHERE rowid = (SELECT count(*) FROM {x})", f"SELECT * FROM (SELECT * FROM {x})",
        "SELECT value FROM meta WHERE key = 'source_dir'", "SELECT text FROM records LIMIT 1",
        f"SELECT movies.title FROM movies LEFT JOIN {x} ON 1 = 1", "SELECT name, sql FROM sqlite_schema",
        "SELECT * FROM sqlite_temp_master", "SELECT * FROM temp.sqlite_schema"))


def long_text(rng: random.Random, scratch: str = "") -> str:
    big = rng.choice((100_000, 150_000, 250_000))
    small = rng.randint(200, 1900)
    return rng.choice((
        "SELECT '" + "a" * big + "'", "SELECT count(*) FROM movies WHERE title = '" + "a" * big + "'",
        "SELECT " + "(" * 10_000 + "1" + ")" * 10_000, "SELECT " + "+".join(["1"] * 10_000),
        "SELECT " + "-" * 10_000 + "1", "SELECT x'" + "ab" * 60_000 + "'", "SELECT 1 " + "UNION SELECT 1 " * 5000,
        "SELECT " + ",".join(["title"] * 20_000) + " FROM movies",
        "SELECT * FROM movies WHERE title IN (" + ",".join(f"'{i}'" for i in range(20_000)) + ")",
        "SELECT '" + "a" * (small - 9) + "'", "SELECT " + "(" * (small // 2 - 4) + "1" + ")" * (small // 2 - 4),
        "SELECT " + "+".join(["1"] * (small // 2)), "SELECT " + "- " * (small // 2 - 5) + "1",
        "SELECT x'" + "ab" * (small // 2 - 6) + "'", "SELECT x'" + "abc" * 10 + "'",
        "SELECT 1 " + "UNION SELECT 1 " * rng.randint(8, 120), "SELECT " + "NOT " * (small // 4 - 2) + "1",
        "SELECT " + "coalesce(" * 150 + "1" + ")" * 150, "SELECT " + "(SELECT " * 120 + "1" + ")" * 120,
        "SELECT " + ",".join(["title"] * (small // 6)) + " FROM movies",
        "SELECT count(*) FROM " + ", ".join(f"movies m{i}" for i in range(rng.choice((40, 63, 64, 65, 100))))
        + " WHERE m0.title = m1.title",
        "SELECT CASE " + " ".join(f"WHEN title = '{i}' THEN {i}" for i in range(small // 30)) + " END FROM movies",
        "SELECT '" + "\u00e9" * 1999 + "'", "SELECT '" + "\U0001f600" * 1990 + "'"))


def nul(rng: random.Random, scratch: str = "") -> str:
    base = rng.choice((valid(rng), writes(rng, scratch), "SELECT 1"))
    at = rng.randrange(len(base) + 1)
    return rng.choice((base[:at] + "\x00" + base[at:], "SELECT 1\x00; DROP TABLE movies", "SELECT '\x00'",
                       "\x00SELECT 1", base + "\x00", "SELECT count(*) FROM movies -- \x00\nDELETE FROM movies"))


_JUNK = ("\ud800", "\udfff", "\u202e", "\u200b", "\ufeff", "\u2028", "\u2029", "\x85", "\u00a0", "\u3000", "\u0301",
         "\U0001f600", "\U0010ffff", "\ue000", "\x1b[31m", "\x7f", "\x01", "\r", "\t", "\x0b", "\x0c")


def unicode_junk(rng: random.Random, scratch: str = "") -> str:
    junk = "".join(rng.choice(_JUNK) for _ in range(rng.randint(1, 8)))
    base = valid(rng)
    at = rng.randrange(len(base) + 1)
    return rng.choice((
        base[:at] + junk + base[at:], junk + base, base + junk, "\uff33\uff25\uff2c\uff25\uff23\uff34 1",
        f"SELECT '{junk}'", f'SELECT "{junk}" FROM movies', f"SELECT title FROM movies WHERE title = '{junk}'",
        "SELECT\u00a01", "SELECT\u30001", "\ufeffSELECT 1", "SELECT 'abc", 'SELECT "abc FROM movies',
        "SELECT [abc", "SELECT `abc", "SELECT 1 /* open", "SELECT 'it''s", "SELECT ''''", "SELECT x'abc'",
        "SELECT x'zz'", "SELECT \"\"\"", "SELECT ')' FROM movies WHERE (title = '(')", "SELECT '\\'; DROP TABLE x",
        "".join(chr(rng.randrange(1, 0x3000)) for _ in range(rng.randint(1, 300))),
        "SELECT " + "".join(chr(rng.randrange(0xd800, 0xe000)) for _ in range(3))))


def doubling(rng: random.Random, scratch: str = "") -> str:
    levels = rng.randint(4, 12)
    n = rng.choice((1000, 5000, 8192, 9999, 10_000, 10_001, 20_000))
    a, b = sized(min(n, 6_000), "a"), sized(min(n // 2, 3_000), "a")
    many = rng.randint(2, 40)
    setb = "(" + sized(min(n // 12, 800), "b") + "||'a')"  # trim's set costs 12 bytes a character
    return rng.choice((
        f"SELECT length({doubled(levels)})", f"SELECT {doubled(levels)}", f"SELECT length({sized(n)})",
        "WITH a(s) AS (SELECT 'xxxxxxxx'), b(s) AS (SELECT s||s||s||s FROM a), c(s) AS (SELECT s||s||s||s FROM b), "
        "d(s) AS (SELECT s||s||s||s FROM c), e(s) AS (SELECT s||s||s||s FROM d), f(s) AS (SELECT s||s||s||s||s||s||s"
        "||s FROM e), g(s) AS (SELECT s||s||s||s FROM f) SELECT length(s) FROM g",
        "SELECT length(" + "||".join(f"t{i}.title" for i in range(8)) + ") FROM "
        + ", ".join(f"movies t{i}" for i in range(8)),
        f"SELECT instr({a}, {b}||'b')", f"SELECT length(replace({a}, {b}||'b', 'x'))",
        f"SELECT length(trim({a}, {setb}))", f"SELECT length(ltrim({a}, {setb}))",
        f"SELECT length(rtrim({a}, {setb}))",
        # the same at sizes only a guard with a large value limit lets through: minutes inside one call
        f"SELECT length(trim({doubled(8)}, {doubled(6, 'b')} || 'a'))",
        f"SELECT instr({doubled(9, start=3)}, {doubled(8)} || 'b')",
        f"SELECT length(replace({doubled(9, start=3)}, {doubled(8)} || 'b', ''))",
        f"WITH s(a, b) AS (SELECT {a}, {b}||'b') SELECT " + ", ".join(f"instr(a||'{i}', b)" for i in range(many))
        + " FROM s",
        f"WITH s(a, b) AS (SELECT {a}, {setb}) SELECT " + ", ".join(f"length(trim(a||'{i}', b))" for i in range(many))
        + " FROM s",
        f"WITH s(a) AS MATERIALIZED (SELECT {sized(4096)}) SELECT " + ",".join(["a"] * rng.randint(50, 300))
        + " FROM s, movie_credits",
        f"SELECT {a} LIKE '" + "%a" * rng.randint(20, 99) + "b'", f"SELECT {a} GLOB '" + "*a" * rng.randint(20, 99)
        + "b'", "SELECT count(*) FROM movies WHERE title LIKE '" + "%a" * rng.randint(100, 900) + "'",
        "SELECT count(*) FROM movies WHERE title LIKE '" + "_" * rng.randint(150, 1500) + "' ESCAPE '!'",
        "SELECT count(*) FROM movies WHERE title GLOB '" + "[a-z]*" * rng.randint(30, 300) + "'",
        "SELECT group_concat(a.title || b.title) FROM movies a, movies b, movies c, movies d",
        "SELECT length(group_concat(a.nominee, (SELECT group_concat(title) FROM movies))) FROM oscar_nominations a, "
        "oscar_nominations b",
        f"SELECT upper({a}), lower({a}), length({a}), substr({a}, 2), {a} = {a} FROM movies",
        f"SELECT strftime({sized(n, '%')}, 'now')",
        f"SELECT count(*) FROM movies a, movies b, movies c WHERE instr({a} || a.title, b.title || c.title)"))


# -- mutations of valid statements
def _tokens(statement: str) -> list[str]:
    return statement.replace("(", " ( ").replace(")", " ) ").replace(",", " , ").split()


def mutate(statement: str, rng: random.Random) -> str:
    """One random mutation of `statement`."""
    kind = rng.randrange(13)
    words = _tokens(statement)
    if kind == 0:
        return statement[:rng.randrange(len(statement) + 1)]
    if kind == 1:
        words.insert(rng.randrange(len(words) + 1), rng.choice(KEYWORDS))
        return " ".join(words)
    if kind == 2:  # duplicate a clause (or any span)
        i = rng.randrange(len(words))
        j = rng.randrange(i, min(len(words), i + 6)) + 1
        return " ".join(words[:j] + words[i:j] + words[j:])
    if kind == 3 and len(words) > 1:  # swap two tokens (keywords, most of the time)
        i, j = rng.sample(range(len(words)), 2)
        words[i], words[j] = words[j], words[i]
        return " ".join(words)
    if kind == 4:
        return statement.rstrip(";") + rng.choice(("; DROP TABLE movies", "; DELETE FROM meta", ";DROP TABLE movies;",
                                                   " UNION SELECT sql FROM sqlite_master",
                                                   " UNION ALL SELECT * FROM meta", "; PRAGMA query_only=0"))
    if kind == 5:  # a typed table replaced by an internal one
        for name in TYPED:
            if name in statement:
                return statement.replace(name, rng.choice(INTERNAL), 1)
        return statement + " JOIN meta"
    if kind == 6 and "'" in statement:  # a literal made huge
        at = statement.index("'") + 1
        return statement[:at] + "a" * rng.choice((500, 1900, 100_000)) + statement[at:]
    if kind == 7 and statement:
        at = rng.randrange(len(statement))
        return statement[:at] + statement[at + 1:]
    if kind == 8 and statement:
        at = rng.randrange(len(statement))
        return statement[:at] + statement[at] * rng.randint(2, 50) + statement[at:]
    if kind == 9:
        return statement.replace("'", rng.choice(('"', "`", "[", "''", "'''", "")), 1)
    if kind == 10:
        return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in statement)
    if kind == 11:
        return rng.choice(("EXPLAIN ", "EXPLAIN QUERY PLAN ", "WITH x AS (SELECT 1) ", "(", "SELECT * FROM (",
                           "VALUES (1); ")) + statement
    return statement + rng.choice((" LIMIT -1", " LIMIT 9223372036854775807", " OFFSET 1e18", " ORDER BY 1, 1, 1",
                                   " COLLATE NOCASE", " GROUP BY 1 HAVING 1", ")", " -- ", " /*", "'", ";;"))


def mutated(rng: random.Random, scratch: str = "") -> str:
    statement = valid(rng)
    for _ in range(rng.randint(1, 3)):
        statement = mutate(statement, rng)
    return statement


FAMILIES = {"valid": (valid, 20), "mutated": (mutated, 20), "writes": (writes, 8), "attach": (attach, 3),
            "pragma": (pragma, 4), "several": (several, 5), "vacuum": (vacuum, 2), "recursive": (recursive, 3),
            "cross_join": (cross_join, 5), "functions": (functions, 6), "internal": (internal, 6),
            "long_text": (long_text, 4), "nul": (nul, 2), "unicode_junk": (unicode_junk, 4),
            "doubling": (doubling, 8)}


def hostile_cases(n: int, seed: int = 0, scratch_dir: str | Path | None = None) -> list[tuple[str, str]]:
    """`n` (family, statement) pairs, the same for the same arguments.

    `scratch_dir` is where ATTACH, VACUUM INTO and writefile point (a test's tmp dir, to see that nothing appears
    there); by default a path that should never exist."""
    rng = random.Random(seed)
    scratch = str(scratch_dir) if scratch_dir is not None else "/nonexistent-hostile-sql"
    names = list(FAMILIES)
    weights = [FAMILIES[name][1] for name in names]
    out = []
    for i in range(n):
        name = names[i] if i < len(names) else rng.choices(names, weights)[0]  # every family at least once
        out.append((name, FAMILIES[name][0](rng, scratch)))
    return out


def hostile_statements(n: int, seed: int = 0, scratch_dir: str | Path | None = None) -> list[str]:
    return [statement for _, statement in hostile_cases(n, seed, scratch_dir)]



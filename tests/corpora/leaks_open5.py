# ruff: noqa: E501  (a corpus of output lines as tools print them; splitting them would hide their shape)
"""The leaks the previous rounds of issue #11 found and left open (``leaks5``), as tools print them: a libpq URL with
an empty host, make's assignments with a short first run, ``$ echo $DB_PASSWORD`` before its value, a plan's
``"old" -> "new"``, psql's lower-case column headers, right-aligned table columns, aligned names after NBSP or more
than 64 blanks, and aligned names mid-line.

Every value comes from a seeded RNG at import (no real credential, nothing for a secret scanner to flag). The
ordinary lines that look like them and must stay whole are ``tests/corpora/benign/workstation_session.txt``.
"""

from __future__ import annotations

from tests.corpora.leak_case import Leak, SeededCases

_CORPUS = SeededCases(5_2026_1202, "open5")
rs, pw, case = _CORPUS.rs, _CORPUS.pw, _CORPUS.case
CASES: list[Leak] = _CORPUS.cases


# A URL whose host is empty (libpq: a Unix socket, given by ?host= or the default one)
p1, p2 = pw(), pw()
case("url-empty-host", f"DATABASE_URL=postgresql://app:{p1}@/orders?host=/var/run/postgresql\n"
     f"  dsn: \"postgres://report:{p2}@/analytics\"\n", p1, p2)
p1 = pw()
case("url-empty-host-json-escaped", f'{{"url":"postgresql:\\/\\/app:{p1}@\\/orders"}}', p1)

# make's assignments: ?= := ::= += after export/override, a short first run before ; , & ) } ]
for line in ("DB_PASSWORD?={a};{b}", "export DB_PASSWORD ?= {a};{b}", "override API_TOKEN := {a},{b}",
             "DB_PASSWORD ::= {a}&{b}", "SECRET_KEY += {a});{b}", "  docker run -e DB_PASSWORD?={a};{b} app"):
    a, b = rs(2), pw(12)
    case(f"make-{len(CASES)}", "# make -p\n" + line.format(a=a, b=b) + "\n", b)

# An echoed command that prints a secret variable, its value alone on the next line
v1, v2, v3 = pw(18), rs(40), pw(16)
case("echo-variable", f"$ echo $DB_PASSWORD\n{v1}\n$ echo done\ndone\n", v1)
case("echo-variable-quoted", f"+ echo \"${{VAULT_TOKEN}}\"\n{v2}\n", v2)
case("printf-variable", f"$ printf '%s\\n' \"$MYSQL_ROOT_PASSWORD\"\n{v3}\n", v3)

# terraform plan: a changed value shows the old and the new one
o, n = pw(), pw()
case("plan-change", f"  # aws_db_instance.main will be updated in-place\n  ~ resource \"aws_db_instance\" \"main\" {{\n      ~ password                 = \"{o}\" -> \"{n}\"\n        id                       = \"orders\"\n    }}\n", o, n)
o, n = rs(32), rs(32)
case("plan-change-token", f"      ~ api_token = \"{o}\" -> \"{n}\"\n", o, n)

# psql's aligned tables with lower-case column names (border 1 and 2), and a Markdown table's
p1, p2, h = pw(16), pw(18), rs(32, "0123456789abcdef")
case("psql-lower-header", f"$ psql -c 'select name, password from app_users'\n name  |     password\n-------+--------------------\n alice | {p1}\n bob   | {p2}\n(2 rows)\n", p1, p2)
case("psql-passwd-md5", f" usename | passwd\n---------+-------------------------------------\n app     | md5{h}\n(1 row)\n", h)
t1 = rs(40)
case("psql-border2-token", f"+----+---------+------------------------------------------+\n| id | service |                api_token                 |\n+----+---------+------------------------------------------+\n|  1 | billing | {t1} |\n+----+---------+------------------------------------------+\n", t1)
p1 = pw(15)
case("markdown-table", f"| user | password |\n|------|----------|\n| ci   | {p1} |\n", p1)

# Right-aligned columns: the values end under the column's name, or start after it
t1, t2, t3 = rs(24), rs(13), rs(20)
case("right-aligned-header", f"NAME                       TOKEN  AGE\nweb     {t1}  5d\napi                {t2}  5d\n", t1, t2)
p1, p2 = pw(9), pw(12)
case("right-aligned-values", f"ID   USER         PASSWORD  CREATED\n1    alice     {p1}  2026-12-01\n22   bob    {p2}  2026-12-01\n", p1, p2)
case("right-aligned-under-left-header", f"NAME    TOKEN                 AGE\nweb       {t3}  5d\napi            {t2}  5d\n", t3, t2)

# An aligned name whose column is no-break spaces (a table copied from a wiki), or wider than 64 blanks
p1, p2, p3 = pw(16), pw(14), pw(18)
case("aligned-nbsp", f"db_host\u00a0\u00a0\u00a0\u00a0\u00a0\u00a0\u00a0= \"db.internal\"\ndb_password\u00a0\u00a0\u00a0= \"{p1}\"\n", p1)
case("aligned-nbsp-colon", f"    user\u00a0\u00a0\u00a0\u00a0\u00a0\u00a0\u00a0\u00a0: ops\n    password\u00a0\u00a0\u00a0\u00a0 \u00a0: {p2}\n", p2)
case("aligned-wide", "app.datasource.url" + " " * 70 + "= jdbc:postgresql://db/app\napp.datasource.password" + " " * 65 + f"= {p3}\n", p3)

# An aligned name mid-line, after other text: with a separator, and as a key-value row's cells without one
p1, p2, p3 = pw(16), rs(20), pw(14)
case("midline-aligned-separator", f"2026-12-01T10:00:00Z loaded config: user      = admin   password      = {p1}\n", p1)
case("midline-aligned-cells", f"config dump: user  admin   password      {p2}\n[db] host  db.internal   api_token      {p3}   port  5432\n", p2, p3)

# A plan's change whose old value is no secret: the new one is judged on its own
n1, n2 = pw(), pw()
case("plan-change-from-placeholder", f"      ~ password                 = \"changeme\" -> \"{n1}\"\n      ~ db_password = null -> \"{n2}\"\n", n1, n2)

OPEN5_LEAKS: tuple[Leak, ...] = tuple(CASES)

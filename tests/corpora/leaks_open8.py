# ruff: noqa: E501  (a corpus of output lines as tools print them; splitting them would hide their shape)
"""The leaks a fresh-context reviewer found in the fifth round of issue #11 and left open (``leaks8``), as tools
print them: make's ``+=``/``!=`` without ``export``, Terraform's ``(sensitive value) -> "PW"``, and the others each
case names.

Every value comes from a seeded RNG at import (no real credential, nothing for a secret scanner to flag). The
ordinary lines that look like them and must stay whole are ``tests/corpora/benign/open8_lookalikes.txt``.
"""

from __future__ import annotations

from tests.corpora.leak_case import Leak, SeededCases

_CORPUS = SeededCases(8_2026_1202, "open8")
rs, pw, case = _CORPUS.rs, _CORPUS.pw, _CORPUS.case
CASES: list[Leak] = _CORPUS.cases


# make's "+=" (appended) and "!=" (a shell command's output) opening their line, without a directive
p1, p2, p3 = "s3cr3t", pw(), rs(32)
case("make-append", f"# make -p\nDB_PASSWORD += {p1}\nAPI_TOKEN != {p3}\nexport SECRET_KEY += {p2}\n", p1, p2, p3)

# terraform plan: a value newly marked sensitive shows its new value after "(sensitive value)"
n1, n2 = pw(), "s3cr3t"
case("plan-change-from-sensitive", f"  # aws_db_instance.main will be updated in-place\n  ~ resource \"aws_db_instance\" \"main\" {{\n      ~ db_password = (sensitive value)\n      ~ password                 = (sensitive value) -> \"{n1}\"\n      ~ db_password = (sensitive value) -> \"{n2}\"\n    }}\n", n1, n2)

# A one-line JSON Secret (a manifest file's stringData) whose value holds an escaped quote, or braces inside a string
p1, p2 = pw(), pw()
case("json-secret-escaped-quote", '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"app"},"stringData":{"db-password":"ab\\"' + p1 + '","config.json":"{\\"db\\":{\\"pw\\":\\"' + p2 + '\\"}}"},"type":"Opaque"}\n', p1, p2)

# vault token lookup: its table's "id" row and -format=json's "id" key (an old-style s. token, a short hvs.)
t1, t2 = "s." + rs(24), "hvs." + rs(20)
case("vault-token-lookup-id", f"Key                 Value\n---                 -----\naccessor            {rs(24)}\ncreation_time       1764662400\ndisplay_name        token-ci\nid                  {t1}\npolicies            [default ci]\nttl                 767h59m\ntype                service\n", t1)
case("vault-token-lookup-id-json", f'{{\n  "data": {{\n    "accessor": "{rs(24)}",\n    "id": "{t2}",\n    "policies": ["default"]\n  }}\n}}\n', t2)

# A JSON string whose part before an escaped quote is one character (judged on that part alone, it was trivial)
p3 = pw(10)
case("json-escaped-short-first-part", '{"user": "app", "password": "a\\"bcdef"}\n{"password": "\\"' + p3 + '"}\n', 'a\\"bcdef', p3)

# A command echoed after a shell's default prompt (no user@host: a container's ``exec -it``), and ``cat`` of a
# mounted secret or a file named for one, then the bare value
v1, v2, v3, v4 = pw(18), pw(16), rs(40), pw(14)
case("default-prompt-echo", f"bash-5.1$ echo $DB_PASSWORD\n{v1}\nbash-5.1$ exit\n", v1)
case("default-prompt-cat-secret", f"sh-4.4# cat /run/secrets/db_password\n{v2}\nsh-4.4# exit\n", v2)
case("cat-secret-file", f"$ cat /run/secrets/api_token\n{v3}\n$ head -c 64 /etc/app/db_password.txt\n{v4}\n$ ls\n", v3, v4)

# Aligned names padded with other Unicode spaces (U+2007 figure space, U+202F narrow no-break, U+3000 ideographic)
p1, p2, p3 = pw(16), pw(14), pw(18)
case("aligned-figure-space", f"db_host\u2007\u2007\u2007\u2007\u2007\u2007\u2007= db.internal\ndb_password\u2007\u2007\u2007= {p1}\n", p1)
case("aligned-narrow-nbsp-colon", f"    user\u202f\u202f\u202f\u202f\u202f\u202f: ops\n    password\u202f\u202f: {p2}\n", p2)
case("aligned-ideographic", f"api_host\u3000\u3000\u3000\u3000\u3000\u3000= api.internal\napi_token\u3000= {p3}\n", p3)

# SQLite's box-drawn table (sqlite3 -box) with a password column and a token column
p1, p2, t1 = pw(16), "s3cr3t", rs(32)
case("sqlite-box-password", f"$ sqlite3 app.db -box 'select id, user, password, api_token from users'\n┌────┬───────┬──────────────────┬──────────────────────────────────┐\n│ id │ user  │     password     │            api_token             │\n├────┼───────┼──────────────────┼──────────────────────────────────┤\n│ 1  │ alice │ {p1} │ {t1} │\n│ 2  │ bob   │ {p2}           │                                  │\n└────┴───────┴──────────────────┴──────────────────────────────────┘\n", p1, p2, t1)

# mysql -B (batch mode: tab-separated, the schema's lower-case names) with a password and a token column
p1, p2, t1 = pw(16), "s3cr3t", rs(32)
case("mysql-batch-password", f"$ mysql -B -e 'select id, user, password, api_token from users' app\nid\tuser\tpassword\tapi_token\n1\talice\t{p1}\t{t1}\n2\tbob\t{p2}\tNULL\n", p1, p2, t1)

OPEN8_LEAKS: tuple[Leak, ...] = tuple(CASES)

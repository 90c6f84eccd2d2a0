# ruff: noqa: E501  (a corpus of output lines as tools print them; splitting them would hide their shape)
"""The leaks ``leaks10`` closed (issue #11), as tools print them: a NATS nkey seed printed alone (``nsc generate
nkey``, a ``.nk`` file), a key column and its value column separated by tabs in the middle of a line, CSV with a
secret's column (``psql --csv``, ``sqlite3 -csv -header``, AWS IAM's ``credentials.csv``), ``║`` double-line boxes
(PrettyTable's ``DOUBLE_BORDER``, tabulate's ``double_grid``/``double_outline``), ``psql -A`` (unaligned, ``|``
between the cells), and box tables of names and values (``doppler secrets``).

Every value comes from a seeded RNG at import (no real credential). The ordinary lines that look like them and
must stay whole are ``tests/corpora/benign/leaks10_lookalikes.txt``.
"""

from __future__ import annotations

import string

from tests.corpora.leak_case import AL, Leak, SeededCases
from tests.corpora.nkeys import public_key, seed

_CORPUS = SeededCases(10_2026_1202, "leaks10")
rs, pw, case = _CORPUS.rs, _CORPUS.pw, _CORPUS.case
R = _CORPUS.rng  # nkeys draws from the same sequence
CASES: list[Leak] = _CORPUS.cases


# NATS nkey seeds without their .creds armour
s1, s2, s3, s5 = seed("user", R), seed("account", R), seed("operator", R), seed("server", R)
case("nsc generate nkey", f"$ nsc generate nkey --user\n{s1}\n{public_key('user', R)}\n", s1)
case("nkey seed file", f"$ cat ~/.local/share/nats/nsc/keys/keys/A/BC/ABC.nk\n{s2}\n", s2)
case("nkey seed in an env line and a config", f"NATS_SEED={s3}\nseed: \"{s5}\"\n", s3, s5)
s4 = seed("user", R)
case("nkey seed in a log line", f"2026-12-02T08:01:12Z DEBUG nats: connecting with nkey seed {s4} to nats://nats:4222\n", s4)

# a key column then its value column, tabs between them, in the middle of a line
t1, t2, t3 = rs(24), pw(16), rs(32)
case("tab cells after a Secret's name", f"db-credentials\tusername\tapp\ndb-credentials\tpassword\t{t1}\n", t1)
case("tab cells in a config dump", f"2026-12-02T08:01:12Z INFO loaded\thost\tdb.internal\tpassword\t{t2}\tport\t5432\n", t2)
case("tab cells of a token", f"ci-bot\tgithub\tapi_token\t{t3}\n", t3)

# CSV with a secret's column
c1, c2, c3, c4 = pw(16), rs(40, AL + "+/"), rs(32), pw(12)
case("psql --csv", f"name,password\nalice,{c1}\nbob,\"{c4},x\"\n", c1, c4)
case("AWS IAM credentials.csv",
     f"User name,Password,Access key ID,Secret access key,Console login link\r\n"
     f"deploy,{pw(14)},AKIA{rs(16, string.ascii_uppercase + string.digits)},{c2},https://123456789012.signin.aws.amazon.com/console\r\n", c2)
case("sqlite3 -csv -header", f"id,user,token,created\n1,ci,{c3},2026-12-01\n2,ops,,2026-12-02\n", c3)

# double-line boxes
d1, d2, d3 = pw(16), rs(32), pw(18)
case("PrettyTable DOUBLE_BORDER",
     "╔══════════╦══════════════════╗\n║ username ║ password         ║\n╠══════════╬══════════════════╣\n"
     f"║ alice    ║ {d1} ║\n╚══════════╩══════════════════╝\n", d1)
case("tabulate double_outline",
     "╔════════╤══════════════════════════════════╗\n║ name   │ token                            ║\n"
     "╟────────┼──────────────────────────────────╢\n"
     f"║ ci     │ {d2} ║\n╚════════╧══════════════════════════════════╝\n", d2)
case("tabulate double_grid",
     "╔═══════╦════════════════════╗\n║ user  ║ password           ║\n╠═══════╬════════════════════╣\n"
     f"║ app   ║ {d3} ║\n╠═══════╬════════════════════╣\n║ ro    ║ -                  ║\n╚═══════╩════════════════════╝\n", d3)

# psql -A (unaligned)
a1, a2 = pw(16), rs(40)
case("psql -A", f"name|password\nalice|{a1}\n(1 row)\n", a1)
case("psql -A with more columns", f"id|service|api_key|created_at\n7|billing|{a2}|2026-12-01 10:00:00+00\n(1 row)\n", a2)

# box tables of names and values
b1, b2, b3 = rs(32), pw(14), rs(40)
case("doppler secrets",
     "┌─────────────────┬──────────────────────────────────┐\n│ NAME            │ VALUE                            │\n"
     "├─────────────────┼──────────────────────────────────┤\n│ DOPPLER_CONFIG  │ prd                              │\n"
     f"│ STRIPE_SECRET   │ {b1} │\n│ DB_PASSWORD     │ {b2}                   │\n"
     "└─────────────────┴──────────────────────────────────┘\n", b1, b2)
case("doppler secrets with computed values",
     "┌────────────────┬──────────────────────────────────────────┬──────┐\n"
     "│ NAME           │ VALUE                                    │ NOTE │\n"
     "├────────────────┼──────────────────────────────────────────┼──────┤\n"
     f"│ GITHUB_TOKEN   │ {b3} │      │\n"
     "└────────────────┴──────────────────────────────────────────┴──────┘\n", b3)

# an aligned table of names and values with a third column
w1, w2 = pw(18), rs(40)
case("az webapp config appsettings list -o table",
     "Name                      Value                                     SlotSetting\n"
     "------------------------  ----------------------------------------  -------------\n"
     "WEBSITE_RUN_FROM_PACKAGE  1                                         False\n"
     f"SQL_PASSWORD              {w1}                        False\n"
     f"STRIPE_API_KEY            {w2}  True\n", w1, w2)

TABLES10_LEAKS: tuple[Leak, ...] = tuple(CASES)

# ruff: noqa: E501  (a corpus of output lines as tools print them; splitting them would hide their shape)
"""The leaks ``leaks15`` closed (issue #11), as tools print them: a bare secret printed after an echoed command or a
REPL expression whose last words name it (``cat api.pass``, ``wg show wg0 private-key``, ``cloudflared tunnel token
NAME``, ``>>> settings.SECRET_KEY``, ``python3 -c 'print(os.environ[...])'``), and a strong password under a name
ending in a rule's word (``PASSWORD_STRENGTH=Sup3rS3cr3t!``) or written in angle brackets (``password=<Xk9#mP2$vL>``),
semicolon-separated CSV with a secret's column, CSV of names and values, and a headerless row of a name, its value
and a flag (``DB_PASSWORD  PW  true``).

Every value comes from a seeded RNG at import (no real credential). The ordinary lines that look like them and
must stay whole are ``tests/corpora/benign/leaks15_lookalikes.txt``.
"""

from __future__ import annotations

import base64
import string

from tests.corpora.leak_case import AL, Leak, SeededCases

_CORPUS = SeededCases(15_2026_1202, "leaks15")
rs, pw, case = _CORPUS.rs, _CORPUS.pw, _CORPUS.case
R = _CORPUS.rng
CASES: list[Leak] = _CORPUS.cases
HEX = string.digits + "abcdef"
B64 = AL + "+/"


def b64(n: int) -> str:
    return base64.b64encode(bytes(R.getrandbits(8) for _ in range(n))).decode()


# echoed: a file printed whose extension or name says secret
e1, e2, e3, e4 = pw(18), b64(32), rs(40), b64(24)
case("echoed cat of a .pass file", f"$ cat /etc/ssl/private/api.pass\n{e1}\n$ ls -l /etc/ssl/private\ntotal 8\n", e1)
case("echoed sudo cat of a .key file", f"deploy@web-1:~$ sudo cat /etc/app/session.key\n{e2}\n", e2)
case("echoed tail of a .token file", f"+ tail -n 1 /srv/ci/runner.token\n{e3}\n+ systemctl restart runner\n", e3)
case("echoed cat of a file named for a password", f"$ cat ./db-password.b64\n{e4}\n", e4)
# echoed: a command whose last word names a secret, or whose word before last does with the secret's name last
k1, k2, k3, k4, k5 = b64(32), "eyJhIjoi" + rs(120) + "In0=", pw(20), f"{rs(6, string.ascii_lowercase + string.digits)}.{rs(16, string.ascii_lowercase + string.digits)}", f"{rs(8, HEX)}-{rs(4, HEX)}-{rs(4, HEX)}-{rs(4, HEX)}-{rs(12, HEX)}"
case("echoed wg show private-key", f"$ sudo wg show wg0 private-key\n{k1}\n", k1)
case("echoed cloudflared tunnel token", f"$ cloudflared tunnel token prod-edge\n{k2}\n", k2)
case("echoed secrets get NAME", f"ops@bastion:~$ doppler secrets get DB_PASSWORD --plain --project api --config prd\n{k3}\n", k3)
case("echoed token create", f"bash-5.1$ kubeadm token create\n{k4}\n", k4)
case("echoed auth:token", f"$ heroku auth:token\n{k5}\n $ heroku apps\n", k5)
# REPL and interpreter expressions that name a secret
r1, r2, r3, r4, r5, r6 = rs(40), pw(16), rs(43, AL + "-_"), b64(32), rs(128, HEX), rs(48)
case("python REPL settings.SECRET_KEY", f">>> from django.conf import settings\n>>> settings.SECRET_KEY\n'django-insecure-{r1}'\n>>> settings.DEBUG\nFalse\n", r1)
case("python REPL os.getenv", f'>>> import os\n>>> os.getenv("DB_PASSWORD")\n\'{r2}\'\n', r2)
case("python REPL print of a config key", f'>>> print(app.config["JWT_SECRET_KEY"])\n{r3}\n', r3)
case("IPython Out of a secret attribute", f"In [3]: creds.secret_key\nOut[3]: '{r4}'\n\nIn [4]: creds.region\nOut[4]: 'eu-west-1'\n", r4)
case("irb credentials.secret_key_base", f'irb(main):001:0> Rails.application.credentials.secret_key_base\n=> "{r5}"\n', r5)
case("python -c printing an env secret", f"$ python3 -c 'import os; print(os.environ[\"API_TOKEN\"])'\n{r6}\n", r6)
r7 = rs(32)
case("node -e printing an env secret", f"$ node -e 'console.log(process.env.SESSION_SECRET)'\n{r7}\n", r7)

# a secret under a name ending in a rule's word (_strength, _validation, _policy, _mode ...): its value decides
d1, d2, d3, d4, d5, d6 = "Sup3rS3cr3t!", pw(14), pw(18), rs(24), pw(16), rs(32)
case("rule word: _STRENGTH in .env", f"APP_ENV=production\nPASSWORD_STRENGTH={d1}\nLOG_LEVEL=info\n", d1)
case("rule word: _validation in YAML", f"auth:\n  password_validation: {d2}\n  min_password_length: 12\n", d2)
case("rule word: _POLICY quoted", f'DB_PASSWORD_POLICY="{d3}"\n', d3)
case("rule word: _validator in JSON", f'{{"secret_validator": "{d4}", "enabled": true}}\n', d4)
case("rule word: export _VALIDATION", f"export TOKEN_VALIDATION={d5}\n", d5)
case("rule word: _mode in ini", f"[api]\napi_key_mode = {d6}\n", d6)

# a real value written in angle brackets (placeholders' words stay: <your-password>, <redacted>, <none>)
a1, a2, a3, a4 = "Xk9#mP2$vL", pw(14), pw(16), rs(24)
case("angle brackets: password=<...>", f"password=<{a1}>\n", a1)
case("angle brackets: YAML quoted", f'database:\n  password: "<{a2}>"\n', a2)
case("angle brackets: JSON", f'{{"user": "svc", "password": "<{a3}>"}}\n', a3)
case("angle brackets: a token in a flag", f"2026-12-02T08:01:12Z exec: deploy --api-token=<{a4}> --env prod\n", a4)
# semicolon-separated CSV with a secret's column; CSV names and values; a headerless names-values-flag row
c1, c2, c3, c4, c5, c6 = pw(16), rs(32), pw(14), rs(40, B64), pw(18), rs(24)
case("csv: semicolons", f"name;password;host\nweb;{c1};db1.internal\napi;{c2};db2.internal\n", c1, c2)
case("csv: semicolons quoted", f'"User";"Password";"Last login"\n"svc-ci";"{c3}";"2026-12-01"\n', c3)
case("csv: name,value rows", f"name,value\nLOG_LEVEL,info\nDB_PASSWORD,{c4}\n", c4)
case("csv: Key;Value rows", f'"Key";"Value";"Label"\n"API_TOKEN";"{c5}";"prod"\n"REPLICAS";"3";"prod"\n', c5)
case("csv: name,value then flag", f"Name\tValue\tSlotSetting\nSMTP_PASSWORD\t{c6}\tFalse\n", c6)
c7, c8 = pw(16), rs(28)
case("aligned: headerless name value flag", f"DB_PASSWORD     {c7}     true\nLOG_LEVEL       info             false\n", c7)
case("aligned: headerless token row with a dash", f"  API_TOKEN  {c8}  -\n", c8)

# a Twilio auth token as the positional argument beside its account SID (the SID is an identifier)
sid1, sid2, sid3 = (f"AC{rs(32, HEX)}" for _ in range(3))
w1, w2, w3 = rs(32, HEX), rs(32, HEX), rs(32, HEX)
case("twilio: Python traceback", f'Traceback (most recent call last):\n  File "/srv/sms/send.py", line 14, in <module>\n    client = Client("{sid1}", "{w1}")\ntwilio.base.exceptions.TwilioRestException: HTTP 401 error\n', w1)
case("twilio: PHP and Node", f'$client = new Client(\'{sid2}\', \'{w2}\');\nconst client = twilio("{sid2}", "{w3}");\n', w2, w3)
case("twilio: C# init", f'TwilioClient.Init("{sid3}", "{w1}");\n', w1)

LEAKS15_LEAKS: tuple[Leak, ...] = tuple(CASES)

"""The leaks ``leaks16`` closed (issue #11), as tools print them: double-quoted values longer than the 256 characters
a detector's window holds, under a secret's name (a Django ``SECRET_KEY``, a JSON ``"private_key"``, a long token in
an env file, a YAML key, an aligned column, a container's env pair, XML, a flag). Before, a closing quote had to
stand within the window, so such a value was no candidate at all and showed whole.

Every value comes from a seeded RNG at import (no real credential). The ordinary lines that look like them and must
stay whole are ``tests/corpora/benign/leaks16_lookalikes.txt``.
"""

from __future__ import annotations

from tests.corpora.leak_case import AL, Leak, SeededCases

_CORPUS = SeededCases(16_2026_1202, "leaks16")
rs, pw, case = _CORPUS.rs, _CORPUS.pw, _CORPUS.case
CASES: list[Leak] = _CORPUS.cases
B64 = AL + "+/"

# Double-quoted values longer than the window (256), at the window's edge and well past it
k1, k2, k3, k4 = rs(300, AL + "!@#%^&*(-_=+)"), rs(1600, B64), rs(257), rs(256)
case("Django SECRET_KEY of 300 characters", f'DEBUG=False\nSECRET_KEY="{k1}"\nALLOWED_HOSTS=*\n', k1)
case("JSON private_key without PEM armour", f'{{\n  "type": "service_account",\n  "private_key": "{k2}",\n'
     '  "client_email": "ci@acme.iam.example.com"\n}\n', k2)
case("a token of 257 characters in an env file", f'export API_TOKEN="{k3}"\n', k3)
case("a token of exactly 256 characters", f'GITHUB_TOKEN="{k4}"\n', k4)
y1, y2, y3 = rs(400, B64), rs(512, B64), rs(320)
case("YAML client_secret", f'oauth:\n  client_id: web\n  client_secret: "{y1}"\n', y1)
case("aligned terraform state show", f'    id                = "db"\n    password          = "{y2}"\n', y2)
case("single-quoted python setting", f"SECRET_KEY = '{y3}'\nDEBUG = False\n", y3)
e1, e2, e3, e4 = rs(300, B64), rs(700, B64), rs(280), rs(350, B64)
case("container env pair in JSON", f'{{"name": "DB_PASSWORD", "value": "{e1}"}}\n', e1)
case(".NET appSettings", f'<appSettings>\n  <add key="DbPassword" value="{e2}"/>\n</appSettings>\n', e2)
case("a flag's quoted value in ps output", f'deploy   4242  0.0 /usr/bin/agent --token "{e3}" --verbose\n', e3)
case("a JSON string with an escaped quote past the window",
     f'{{"client_secret": "{e4[:200]}\\"{e4[200:]}", "region": "eu"}}\n', e4[:200], e4[200:])
m1 = rs(300, B64)
case("mysql -p with a long quoted password", f"$ mysql -u app -p\"{m1}\" orders\n", m1)


# terraform output -json: a sensitive output whose value is an object, a map, a list or nested, printed pretty
t1, t2, t3, t4, t5, t6 = pw(18), rs(32), pw(16), rs(40, B64), pw(20), rs(24)
case("terraform output -json sensitive object",
     '$ terraform output -json\n{\n  "db": {\n    "sensitive": true,\n    "type": [\n      "object",\n      {\n'
     '        "host": "string",\n        "password": "string",\n        "port": "number",\n        "user": "string"\n'
     '      }\n    ],\n    "value": {\n      "host": "db-prod.internal",\n'
     f'      "password": "{t1}",\n      "port": 25061,\n'
     f'      "user": "app_{t6[:6]}"\n    }}\n  }},\n'
     '  "endpoint": {\n    "sensitive": false,\n    "type": "string",\n'
     '    "value": "https://api.example.com"\n  }\n}\n',
     t1, "db-prod.internal", "25061", f"app_{t6[:6]}")
case("terraform output -json sensitive map",
     '{\n  "api_keys": {\n    "sensitive": true,\n    "type": [\n      "map",\n      "string"\n    ],\n    "value": {\n'
     f'      "billing": "{t2}",\n      "search": "{t3}"\n    }}\n  }}\n}}\n', t2, t3)
case("terraform output -json sensitive list of objects",
     '{\n  "service_accounts": {\n    "sensitive": true,\n    "type": [\n      "list",\n      [\n        "object",\n'
     '        {\n          "key": "string",\n          "name": "string"\n        }\n      ]\n    ],\n    "value": [\n'
     f'      {{\n        "key": "{t4}",\n        "name": "ci-runner"\n      }},\n      {{\n        "key": "{t5}",\n'
     '        "name": "deploy-bot"\n      }\n    ]\n  }\n}\n', t4, t5, "ci-runner", "deploy-bot")
s1, s2, s3 = rs(28), pw(16), rs(36, B64)
case("terraform show -json, one line",
     '{"format_version":"1.0","terraform_version":"1.6.6","values":{"outputs":{"db":{"sensitive":true,'
     f'"value":{{"password":"{s1}","username":"admin"}},"type":["object",{{"password":"string","username":"string"}}]}}}},'
     '"root_module":{}}}\n', s1, '"admin"')
case("terraform state pull, sensitive after the value",
     '{\n  "version": 4,\n  "outputs": {\n    "smtp": {\n      "value": {\n'
     f'        "password": "{s2}",\n        "server": "smtp-relay-7.example.org"\n      }},\n'
     '      "type": [\n        "object",\n        {\n          "password": "string",\n          "server": "string"\n'
     '        }\n      ],\n      "sensitive": true\n    }\n  },\n  "resources": []\n}\n',
     s2, "smtp-relay-7.example.org")
case("terraform plan -json output change marked after_sensitive",
     '{"output_changes":{"token":{"actions":["create"],"before":null,'
     f'"after":{{"value":"{s3}","ttl":86400}},"after_unknown":false,"before_sensitive":false,"after_sensitive":true}}}}}}\n',
     s3)

# 1Password: a CONCEALED field's value before its type (jq's reshapings, other key orders, op v1), and tables of fields
o1, o2, o3, o4, o5, o6, o7 = pw(18), rs(32), pw(16), rs(24), pw(20), pw(14), rs(28)
case("1Password field JSON, value before its type",
     f'{{"id": "password", "label": "password", "value": "{o1}", "type": "CONCEALED"}}\n', o1)
case("1Password fields reshaped by jq, pretty",
     '[\n  {\n    "label": "username",\n    "value": "deploy",\n    "type": "STRING"\n  },\n'
     f'  {{\n    "label": "api credential",\n    "value": "{o2}",\n    "reference": "op://Infra/Stripe/credential",\n'
     '    "section": {\n      "id": "add more"\n    },\n    "type": "CONCEALED"\n  }\n]\n', o2)
case("op v1 section field", f'{{"fields":[{{"k":"string","n":"user","t":"username","v":"ops"}},'
     f'{{"k":"concealed","n":"pw","t":"db password","v":"{o3}"}}]}}\n', o3)
case("1Password fields as a table, value after its type",
     f"LABEL       TYPE       VALUE\nusername    STRING     deploy\npassword    CONCEALED  {o4}\n"
     f"pin code    CONCEALED  {o5}\n", o4, o5)
case("1Password fields as TSV, value before its type",
     f"db\tpassword\t{o6}\tCONCEALED\nweb\tapi key\t{o7}\tCONCEALED\top://Infra/web/api key\n", o6, o7)
o8 = pw(22)
case("a concealed value alone beside its type", f"{o8}  CONCEALED\n", o8)

# CSV: a quoted cell holding a newline (RFC 4180) under a secret's column: its record read across its lines
c1, c2, c3, c4 = rs(10), rs(12), pw(9), rs(20)
case("psql --csv, a password cell over two lines", f'name,password,note\ndb,"{c1}\n{c2}",rotated\n', c1, c2)
case("CSV export, a multi-line note before the token column",
     f'id,note,token\n1,"moved to vault\nsee runbook",{c4}\n2,plain,{c3}x\n', c4, f"{c3}x")

LEAKS16_LEAKS: tuple[Leak, ...] = tuple(CASES)

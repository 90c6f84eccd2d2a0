"""Leak cases found by the acceptance check of issue #11: a YAML or ini/properties line's plain password whose
first characters come before ``; , & ) } ]`` (or which starts with up to six digits), as config files and
``kubectl get cm -o yaml``/``cat`` print them. About 1 in 8 symbol-generated passwords has this shape.

Fake credentials are assembled at runtime so secret scanners don't flag this file.
"""

from __future__ import annotations

from tests.corpora.leak_case import Leak

LINE_VALUE_LEAKS: tuple[Leak, ...] = (
    Leak("line_yaml_short_run", "database:\n  host: db.prod\n  password: ab;" + "cdefghij\n  pool: 10\n",
         ("ab;cdefghij", "cdefghij")),
    Leak("line_yaml_digits_run", "redis:\n  password: 123;" + "abcdefgh\n", ("123;abcdefgh", "abcdefgh")),
    Leak("line_yaml_ampersand", "db_password: x&" + "Kq8sLp2mZ\ndb_user: app\n", ("Kq8sLp2mZ",)),
    Leak("line_yaml_list_item", "users:\n  - name: backup\n  - password: a," + "bcdefgh9\n", ("bcdefgh9",)),
    Leak("line_ini_paren", "[client]\nuser = backup\npassword = 12)" + "xYz9Kq\n", ("xYz9Kq", "12)xYz9Kq")),
    Leak("line_yaml_brace_key", "s3:\n  secret_key: a}" + "bQ9xLm2Wq7\n", ("bQ9xLm2Wq7",)),
    Leak("line_properties_colon", "spring.datasource.url=jdbc:postgresql://db/app\nspring.datasource.password:9]"
         + "Tq2#vLp8\n", ("Tq2#vLp8",)),
    Leak("line_yaml_generated_short_first_run", "oauth:\n  client_secret: QWbR|O," + "J/}A#Axqv#L7\n",
         ("J/}A#Axqv#L7", "QWbR|O")),
    Leak("line_yaml_bracket_first", "api:\n  api_token: l(o/wwHOkU)" + "aCQa9\n", ("wwHOkU", "aCQa9")),
)

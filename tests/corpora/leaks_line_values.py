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
    # the same lines in a unified diff (git diff, helm diff: "+", "-", context " "), quoted in a mail or Markdown
    # ("> "), under a quoted key, and after a YAML anchor or tag (found by review, issue #11)
    Leak("line_diff_added", "@@ -3,2 +3,2 @@ database:\n-  password: old\n+  password: ab;" + "cdefghij\n   pool: 10\n",
         ("ab;cdefghij", "cdefghij")),
    Leak("line_diff_removed_deep", "-        password: 123;" + "abcdefgh\n+        password: x\n", ("abcdefgh",)),
    Leak("line_diff_assignment_tail", "+  db_password: Kq8s;" + "Lp2mZx\n", ("Lp2mZx", "Kq8s;")),
    Leak("line_mail_quote", "> > password: a," + "bcdefgh9\n> thanks\n", ("bcdefgh9",)),
    Leak("line_quoted_key", "'password': a;" + "bcdefghij\n\"api_token\": a}" + "bQ9xLm2Wq\n",
         ("bcdefghij", "bQ9xLm2Wq")),
    Leak("line_yaml_anchor", "base:\n  password: &pw " + "Kq8sLp2mZx\n  user: app\n", ("Kq8sLp2mZx",)),
    Leak("line_yaml_tag", "password: !!str " + "Kq8sLp2mZx\nsecret_key: &sk ab;" + "Xk9mQ2vL\n",
         ("Kq8sLp2mZx", "Xk9mQ2vL")),
    Leak("line_yaml_anchor_weak", "password: &pw " + "hunter2xyz\n", ("hunter2xyz",)),
    Leak("line_diff_env_file", "--- a/.env\n+++ b/.env\n-DB_PASSWORD=ab;" + "cdefghij\n+DB_PASSWORD=x&" + "Kq8sLp2mZ\n",
         ("cdefghij", "Kq8sLp2mZ")),
    Leak("line_diff_compose_list", "   environment:\n+    - POSTGRES_PASSWORD=12)" + "xYz9Kq\n", ("xYz9Kq",)),
)

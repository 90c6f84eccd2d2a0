"""Found by a fresh-context review of the sanitizer (issue #11): leaks and false alarms in output an on-call
engineer's tools print, each fixed where it was found; the lines around them that must stay."""

from __future__ import annotations

import pytest

from bot.sanitize import redact

SECRETS = [
    # A JSON or Python pair opening the text: quoted_pair and the assignment both start at byte 0; quoted_pair
    # leaves a plain pair to the assignment, which then never got its turn (mid-text the assignment starts a byte
    # earlier, at the boundary, and wins).
    ('"password": "Kq8sLp2mXv9",\n  "user": "app"\n', "Kq8sLp2mXv9"),
    ("'password': 'Kq8sLp2mXv9'\n", "Kq8sLp2mXv9"),
    ('"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",\n', "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    # Weak human secrets in an environment variable named for its secret: env, .env, export, docker's Env,
    # a container's name/value pair, a Dockerfile's ENV. The weak value is the one people pick, and must not show.
    ("JWT_SECRET=supersecret\n", "supersecret"),
    ("APP_SECRET=mysecretvalue\n", "mysecretvalue"),
    ("SESSION_SECRET=keyboardcat\n", "keyboardcat"),
    ("API_KEY=foobarbaz\n", "foobarbaz"),
    ("export GITHUB_TOKEN=mytoken\n", "mytoken"),
    ("VAULT_TOKEN=myroot\n", "myroot"),
    ('        "Env": [\n            "JWT_SECRET=supersecret"\n        ],\n', "supersecret"),
    ("        - name: JWT_SECRET\n          value: supersecret\n", "supersecret"),
    ("ENV APP_SECRET mysecretvalue\n", "mysecretvalue"),
    # ... and where an environment variable's name shows it is one: compose's environment map, systemd, ps
    ("    environment:\n      JWT_SECRET: supersecret\n      LOG_LEVEL: info\n", "supersecret"),
    ("Environment=APP_SECRET=mysecretvalue\n", "mysecretvalue"),
    ("root  12  0.0  0.1 env JWT_SECRET=supersecret ./app\n", "supersecret"),
    # Tokens that name themselves, missing from the families
    ("TWINE_PASSWORD is unset; using pypi-AgEIcHlwaS5vcmcCJGFiY2RlZjAxLTIzNDUtNjc4OS1hYmNkLWVmMDEyMzQ1Njc4OQACKlsz\n",
     "AgEIcHlwaS5vcmcCJGFiY2RlZjAxLTIzNDUtNjc4OS1hYmNk"),
    ("$ gcloud auth print-access-token\nya29.a0AfH6SMBx3kq8sLp2mXv9abcdEFGHijklmnop\n",
     "a0AfH6SMBx3kq8sLp2mXv9abcdEFGH"),
    ("X-Shopify-Access-Token: shpat_0123456789abcdef0123456789abcdef\n", "0123456789abcdef0123456789abcdef"),
    ("stripe listen: Ready! Your webhook signing secret is whsec_abcdefghijklmnopqrstuvwxyz012345\n",
     "abcdefghijklmnopqrstuvwxyz012345"),
    ("gitlab-runner register --registration-token GR1348941abcdefghij0123456789\n", "GR1348941abcdefghij0123456789"),
    ("brevo key xkeysib-" + "0123456789abcdef" * 4 + "-AbCdEfGhIjKlMnOp\n", "0123456789abcdef0123456789abcdef"),
    ("twilio api:core:keys:create -> sid SK0123456789abcdef0123456789abcdef\n", "0123456789abcdef0123456789abcdef"),
    # SQL that sets a password, as PostgreSQL's statement log and MySQL's general log print it
    ("2026-12-01 10:00:00 UTC [123] LOG:  statement: ALTER ROLE app WITH ENCRYPTED PASSWORD 'Kq8sLp2mXv9';\n",
     "Kq8sLp2mXv9"),
    ("CREATE USER app WITH PASSWORD 'hunter 2';\n", "hunter 2"),
    ("ALTER ROLE app PASSWORD 'Kq8sLp2mXv9';\n", "Kq8sLp2mXv9"),
    ("2026-12-01T10:00:00Z 12 Query ALTER USER 'app'@'%' IDENTIFIED BY 'Kq8sLp2mXv9'\n", "Kq8sLp2mXv9"),
    ("CREATE USER 'app'@'%' IDENTIFIED WITH mysql_native_password BY 'Kq8sLp2mXv9';\n", "Kq8sLp2mXv9"),
    # Password names in German and French
    ("PASSWORT=Kq8sLp2mXv9\n", "Kq8sLp2mXv9"),
    ("MOT_DE_PASSE=Kq8sLp2mXv9\n", "Kq8sLp2mXv9"),
    ("  db_passwort: geheim123\n", "geheim123"),
    # aws ssm get-parameter --with-decryption (JSON and YAML), secretsmanager's plain SecretString
    ('{"Parameter": {"Name": "/prod/db/password", "Type": "SecureString", "Value": "hunter2x", "Version": 3}}\n',
     "hunter2x"),
    ("Parameter:\n  Name: /prod/db/password\n  Type: SecureString\n  Value: hunter2 x\n  Version: 3\n", "hunter2 x"),
    ('    "SecretString": "hunter2",\n', "hunter2"),
    # clients' password flags: mongosh -p, sqlcmd -P, ldapsearch -w, openssl pass:
    ("mongosh -u admin -p Kq8sLp2mXv9 --authenticationDatabase admin\n", "Kq8sLp2mXv9"),
    ("mongodump --uri x -u admin -p 'Kq8s Lp2m'\n", "Kq8s Lp2m"),
    ("sqlcmd -S db -U sa -P Kq8sLp2mXv9 -Q 'select 1'\n", "Kq8sLp2mXv9"),
    ("ldapsearch -x -H ldap://ldap -D cn=admin,dc=ex -w Kq8sLp2mXv9 -b dc=ex\n", "Kq8sLp2mXv9"),
    ("openssl rsa -in k.pem -passin pass:hunter2 -out k2.pem\n", "hunter2"),
    # a container's args as list items (kubectl get pod -o yaml / -o json)
    ('        - "--db-password"\n        - "Kq8sLp2mXv9"\n', "Kq8sLp2mXv9"),
    ("        - --token\n        - abcdefgh\n", "abcdefgh"),
    ('    "args": ["--token", "Kq8sLp2mXv9abcdef", "--port", "80"]\n', "Kq8sLp2mXv9abcdef"),
    # more self-naming tokens; an Okta SSWS authorization; a Telegram bot token in a logged URL
    ("glsa_Kq8sLp2mXv9abcdefghijklmnopqrstu_0123abcd\n", "Kq8sLp2mXv9abcdefghijklmnopqrstu"),
    ("ATATT3xFfGF0Kq8sLp2mXv9abcdefghijklmnopqrstuvwxyz0123456789=ABCDEF12\n", "Kq8sLp2mXv9abcdefghijklmnop"),
    ("NRAK-ABCDEFGHIJKLMNOPQRSTUVWXYZ0\n", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0"),
    ("AGE-SECRET-KEY-1" + "Q" * 58 + "\n", "Q" * 30),
    ("Authorization: SSWS 00QCjAl4MlV-WPXM-ABCDEFGHIJKLMNOPQRS\n", "00QCjAl4MlV-WPXM-ABCDEFGHIJKLMNOPQRS"),
    ("POST https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawx/sendMessage 200\n",
     "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawx"),
    # config files' password lines: redis.conf quoted, slapd/nslcd/postfix LDAP binds; pgbouncer's userlist
    ('requirepass "Kq8s Lp2m"\n', "Kq8s Lp2m"),
    ("rootpw {SSHA}Kq8sLp2mXv9abcdefghij\n", "Kq8sLp2mXv9abcdefghij"),
    ("bindpw Kq8sLp2mXv9\n", "Kq8sLp2mXv9"),
    ("bind_pw = Kq8sLp2mXv9\n", "Kq8sLp2mXv9"),
    ('"app" "md5d41d8cd98f00b204e9800998ecf8427e"\n', "d41d8cd98f00b204e9800998ecf8427e"),
    ('"admin" "SCRAM-SHA-256$4096:abc=$def=:ghi="\n', "SCRAM-SHA-256$4096:abc=$def=:ghi="),
    # Oracle's user/password@service; rabbitmqctl users; Redis ACL rules; a session cookie in a JSON log
    ("jdbc:oracle:thin:scott/Kq8sLp2mXv9@db:1521/ORCL\n", "Kq8sLp2mXv9"),
    ("sqlplus -s scott/Kq8sLp2mXv9@//db:1521/ORCL @script.sql\n", "Kq8sLp2mXv9"),
    ("expdp system/Kq8sLp2mXv9@ORCL directory=d dumpfile=x.dmp\n", "Kq8sLp2mXv9"),
    ("rabbitmqctl add_user app Kq8sLp2mXv9\n", "Kq8sLp2mXv9"),
    ("rabbitmqctl -n rabbit@host change_password app 'Kq8s Lp2m'\n", "Kq8s Lp2m"),
    ("ACL SETUSER alice on >Kq8sLp2mXv9 ~* +@all\n", "Kq8sLp2mXv9"),
    ("user alice on allcommands allkeys >Kq8sLp2mXv9\n", "Kq8sLp2mXv9"),
    ('{"headers": {"cookie": "sessionid=Kq8sLp2mXv9abcdef; csrftoken=abc"}}\n', "Kq8sLp2mXv9abcdef"),
]

# What stays: settings about a secret (its last word is not the secret's), words in prose, placeholders.
BENIGN = [
    "SECRET_BACKEND=vault\n",
    "AUTH=ldap\n",
    "TOKEN_AUDIENCE=api\n",
    "SECRETS_NAMESPACE=prod\n",
    "JWT_SECRET_FILE=/run/secrets/jwt\n",
    "API_TOKEN=not a token\n",
    "run with API_TOKEN=abc then exit\n",
    "      SECRET_BACKEND: vault\n      TOKEN_TYPE: bearer\n",
    "The JWT_SECRET: supersecret value is weak, rotate it\n",
    "API_KEY=changeme\n",
    "JWT_SECRET=${JWT_SECRET}\n",
    "PWD=/home/alice/src/app\n",
    '"token_type": "bearer",\n',
    "GITHUB_TOKEN=\n",
    # an access log whose query ends in a word before the protocol: no bearer token
    '10.0.0.12 - - [01/Dec/2026:10:00:00 +0000] "GET /login?next=/d&token_type=bearer HTTP/1.1" 200 512 "-" "curl/8"\n',
    "ALTER ROLE app PASSWORD NULL;\n",
    "The password 'expired' message means it is time to rotate.\n",
    "IMPASSE=resolved\n",
    "ACxxxxxxxx SKIP=0123456789abcdef0123456789abcdef0\n",
    '{"Parameter": {"Name": "/prod/db/host", "Type": "String", "Value": "db.internal", "Version": 3}}\n',
    '    "SecretStringVersion": "3",\n',
    "mongosh --host db -p 27017\n",
    "openssl rsa -in k.pem -passin env:KEY_PASS -passout file:/run/pass\n",
    "        - --token-file\n        - /run/secrets/token\n",
    "        - --secret-name\n        - db-credentials\n",
    "sqlplus / as sysdba\n",
    "rabbitmqctl list_users\n",
    "user www-data;\n",
    "user alice > /tmp/out\n",
    "user default on nopass ~* &* +@all\n",
    '"GET /" "200"\n',
]


@pytest.mark.parametrize(("text", "secret"), SECRETS, ids=[str(i) for i in range(len(SECRETS))])
def test_secret_forms_found_by_review_are_redacted(text: str, secret: str) -> None:
    cleaned, count = redact(text)
    assert secret not in cleaned and count >= 1, cleaned


def test_a_self_naming_token_in_a_url_path_keeps_the_path_after_it() -> None:
    line = "POST https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawx/sendMessage 200\n"
    assert redact(line)[0] == "POST https://api.telegram.org/bot123456789:[REDACTED:telegram_token]/sendMessage 200\n"


@pytest.mark.parametrize("line", BENIGN)
def test_lines_around_them_stay(line: str) -> None:
    assert redact(line) == (line, 0)

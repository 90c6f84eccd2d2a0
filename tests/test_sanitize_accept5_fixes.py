"""The cases accept5's check (``tests/test_sanitize_accept5.py``) left open and leaks12 closed, each beside the
look-alikes that must stay as they are: cards first (a program's password argument, an invisible character
inside a redacted secret), then ordinary lines that were redacted, then leaks."""

from __future__ import annotations

import shlex

import pytest

from bot.sanitize import display_command_line, redact, redact_argv, sanitize_output
from bot.sanitize.secret_argv import judge_argv

PW = "Zq7xK2mP9vL4wT8n"


@pytest.mark.parametrize("argv", [
    ("rclone", "obscure", PW),
    ("rclone", "obscure", PW, "--config", "/etc/rclone.conf"),
    ("ssh-keygen", "-t", "ed25519", "-N", PW, "-f", "/tmp/deploy_key"),
    ("ssh-keygen", "-p", "-P", PW, "-N", "new" + PW, "-f", "k"),
    ("7z", "a", f"-p{PW}", "-mhe=on", "backup.7z", "data/"),
    ("7za", "x", f"-p{PW}", "backup.7z"),
    ("/usr/bin/7zz", "x", f"-p{PW}", "backup.7z"),
    ("opsctl", "run", "--", "7z", "a", f"-p{PW}", "b.7z"),
])
def test_a_programs_password_argument_is_a_fingerprinted_marker(argv: tuple[str, ...]) -> None:
    shown, warned = display_command_line(argv)
    assert PW not in shown and "[REDACTED:" in shown and "#" in shown and not warned, shown
    assert PW not in " ".join(redact_argv(argv))


@pytest.mark.parametrize("argv", [
    ("rclone", "copy", "src:", "dst:"),
    ("rclone", "config", "show"),
    ("rclone", "obscure", "-"),  # reads the password from stdin
    ("ssh-keygen", "-l", "-f", "/etc/ssh/ssh_host_ed25519_key.pub"),
    ("ssh-keygen", "-p", "-f", "k"),  # prompts
    ("7z", "a", "-p", "backup.7z", "data/"),  # -p alone prompts
    ("7z", "l", "backup.7z"),
    ("ssh", "-N", "-L", "8080:db:5432", "bastion"),  # -N means no command to ssh
    ("pg_dump", "-p", "5432", "orders"),  # -p is a port elsewhere
])
def test_the_same_arguments_of_other_programs_are_shown_whole(argv: tuple[str, ...]) -> None:
    assert display_command_line(argv) == (shlex.join(argv), False)
    assert redact_argv(argv) == list(argv)


def test_an_invisible_character_inside_a_redacted_secret_still_draws_the_warning() -> None:
    argv = ("env", f"DB_PASSWORD={PW}\u200b{PW}", "./migrate")
    shown, warned = display_command_line(argv)
    assert PW not in shown and "\u200b" not in shown and "\\u200b" not in shown and warned, shown
    assert display_command_line(("env", f"DB_PASSWORD={PW}", "./migrate"))[1] is False
    assert display_command_line(("printf", "a\tb"))[1] is True  # ASCII controls too


CERT_LINES = ("-----BEGIN CERTIFICATE-----\nMIIDIeQo6vKOpeRFV6+ndrYaW3hsawPiAzeF6hHjkMtAVWv66zS3nB7IjkBUtreX\n"
              "Jt9b2MWMXPIupA6PUBKXYymCe4FPe+PklKbjr8Sm0Vqp846iB/qr5VpggOdIuvtk\n")


@pytest.mark.parametrize("line", [
    "python-secrets==0.1.0",  # pip freeze
    "django-secrets==1.2.3rc1",
    "mysql_password_validation: strong",
    "password_strength: medium",
    "STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx",  # an .env.example's x-filled key
    "stripe: rk_test_XXXXXXXXXXXXXXXXXXXXXXXX",
    "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "SLACK_BOT_TOKEN=xoxb-xxxxxxxxxxxx-xxxxxxxxxxxx",
    "SESSION_SECRET=change-me-in-production",  # a placeholder that asks to be replaced
    "JWT_SECRET=CHANGE_ME",
    "APP_SECRET=replace-this-before-deploy",
    "SECRET_KEY=your-secret-key-here",
    "    existingSecret: oauth2-proxy-creds",  # a Helm value naming a Secret object
    "existingSecretName: grafana-admin.v2",
    "src/client.test.ts:8:  const apiKey = 'test-key';",
    "api_key = 'fake-api-key'",
    "token = 'my_dummy_token'",
])
def test_ordinary_look_alikes_stay_as_they_are(line: str) -> None:
    assert redact(line)[0] == line


@pytest.mark.parametrize(("line", "secret"), [
    ("PYTHON_SECRET=Xk29dLq0Zp2mW8", "Xk29dLq0Zp2mW8"),
    ("secrets=0.1.0x9Kq2Lm", "0.1.0x9Kq2Lm"),  # no "==": an assignment
    ("mysql_password: strong", "strong"),
    ("STRIPE_SECRET_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"),
    ("see sk_live_xxxxxxxxxxxxxxxxxxxxxxxxA7 there", "xxxxxxxxxxxxxxxxxxxxxxxxA7"),  # not only x's
    ("GITHUB_TOKEN=ghp_4eC39HqLyjWDarjtT1zdp7dcXk29dLq0Zp2m", "ghp_4eC39HqLyjWDarjtT1zdp7dc"),
    ("SESSION_SECRET=correct-horse-battery-staple", "correct-horse-battery-staple"),  # no placeholder's opening
    ("SESSION_SECRET=changeme-2024", "changeme-2024"),  # a digit: a weak real one
    ("password: change-me-now!", "change-me-now!"),
    ("    existingSecret: Xk29dk2LqP0sW8", "Xk29dk2LqP0sW8"),  # no object's name
    ("    secret: oauth2-proxy-creds-9fK2xQ", "oauth2-proxy-creds-9fK2xQ"),  # not existing...: a literal
    ("const apiKey = 'staging-key';", "staging-key"),
    ("const apiKey = 'test-9Xk2mPq7';", "test-9Xk2mPq7"),
    ("password = 'test-password'", "test-password"),  # a password's name takes any value
])
def test_the_real_secrets_of_the_same_shapes_are_still_redacted(line: str, secret: str) -> None:
    assert secret not in redact(line)[0]


def test_a_secrets_certificate_is_public_and_shown_but_its_key_is_withheld() -> None:
    crt = "$ kubectl get secret wildcard-tls -n ingress -o jsonpath='{.data.tls\\.crt}' | base64 -d | head -3\n"
    assert sanitize_output((crt + CERT_LINES).encode()).text == crt + CERT_LINES
    for public in ("{.data.ca\\.crt}", "{.data.cert\\.pem}", "{.data.id_rsa\\.pub}"):
        assert judge_argv(["kubectl", "get", "secret", "s", "-o", f"jsonpath={public}"]) is None
    for secret in ("{.data.tls\\.key}", "{.data}", "{.data.key\\.pem}", "{.data.tls\\.crt}{.data.tls\\.key}",
                   "{.data.password}"):
        assert judge_argv(["kubectl", "get", "secret", "s", "-o", f"jsonpath={secret}"]) is not None, secret
    key = crt.replace("tls\\.crt", "tls\\.key")
    assert "MIIDIeQo6" not in sanitize_output((key + CERT_LINES).encode()).text


@pytest.mark.parametrize(("text", "secret"), [
    ('1) "masterauth"\n2) "Xk9qLm2Wp"\n3) "requirepass"\n4) "Zq8vR2mK9x"\n', "Zq8vR2mK9x"),  # the second pair
    (" 9) \"maxclients\"\n10) \"10000\"\n11) \"requirepass\"\n12) \"Zq8vR2mK9x\"\n", "Zq8vR2mK9x"),
    ('3) "user migrator on >Hv4mQ9zLp2 ~* +@all"\n', "Hv4mQ9zLp2"),  # an ACL rule's cleartext password
    ("user deploy on #5e88489 ~app:* >Kq8sLp2m +@all\n", "Kq8sLp2m"),
])
def test_redis_replies_and_acl_rules_hide_their_passwords(text: str, secret: str) -> None:
    assert secret not in redact(text)[0]


@pytest.mark.parametrize("text", [
    '1) "user default on nopass ~* &* +@all"\n2) "user worker on #9f86d08 ~jobs:* +@read"\n',
    "sudo -u user id >/dev/null\n",  # a redirection
    '1) "maxmemory"\n2) "0"\n3) "requirepass"\n4) ""\n',
    "the user bob saw > 5 errors\n",
])
def test_redis_look_alikes_stay(text: str) -> None:
    assert redact(text)[0] == text


@pytest.mark.parametrize("text", ["sudo -u user id >&2\n", "sudo -u user run.sh >>/var/log/x\n",
                                  "su user -c 'x' >$LOG\n"])
def test_a_users_redirection_is_no_acl_password(text: str) -> None:
    assert redact(text)[0] == text


@pytest.mark.parametrize(("line", "secret"), [
    (f"env[DB_PASS] = {PW}", PW),
    (f'  env[SMTP_PW] = "{PW}"', PW),
    (f"env[REDIS_PASSWORD]={PW}", PW),
])
def test_a_php_fpm_pools_secret_environment_value_is_redacted(line: str, secret: str) -> None:
    assert secret not in redact(line)[0]


@pytest.mark.parametrize("line", [
    "env[APP_ENV] = production",
    "env[DB_PASS] = $DB_PASS",  # passed on from the master's environment
    "env[API_TOKEN] = ${API_TOKEN}",
    "env[PATH] = /usr/local/bin:/usr/bin:/bin",
    "env[DB_PASSWORD_FILE] = /run/secrets/db",
    "env[DB_PASS] = changeme",
])
def test_php_fpm_look_alikes_stay(line: str) -> None:
    assert redact(line)[0] == line


SPRING = ("DEBUG 1 --- [main] o.s.c.e.PropertySourcesPropertyResolver : Found key '{}' in PropertySource '{}' "
          "with value of type {}")


@pytest.mark.parametrize(("key", "source"), [
    ("spring.mail.password", "systemEnvironment"),
    ("spring.datasource.password", "applicationConfig: [classpath:/application.yml]"),
    ("SMTP_PW", "systemEnvironment"),
])
def test_springs_resolved_secret_property_is_redacted(key: str, source: str) -> None:
    line = SPRING.format(key, source, "String") + f": {PW}"
    assert redact(line)[0] == line.replace(PW, "[REDACTED:password]")


@pytest.mark.parametrize("line", [
    SPRING.format("server.port", "systemEnvironment", "String") + ": 8080",
    SPRING.format("app.token.ttl", "x", "Integer") + ": 3600",
    SPRING.format("spring.datasource.password", "x", "String") + ": ${DB_PASSWORD}",
    SPRING.format("spring.mail.password", "systemEnvironment", "String"),  # Spring's own line: no value
])
def test_spring_look_alikes_stay(line: str) -> None:
    assert redact(line)[0] == line


@pytest.mark.parametrize("key", ["K002Zq9mW3xR7tY2uI8oP4aS6dF1gH5aB3cD4e", "K005Zq9mW3xR7tY2uI8oP4aS6dF1gH5"])
def test_a_b2_application_key_of_any_issued_length_is_redacted(key: str) -> None:
    text = f"[b2-backups]\ntype = b2\naccount = 0021a2b3c4d5e6f0000000001\nkey = {key}\n"
    assert redact(text)[0] == text.replace(key, "[REDACTED:b2_application_key]")


@pytest.mark.parametrize("line", [
    "account = 0021a2b3c4d5e6f0000000001",  # the key's id is public
    "K0012345 sectors",
    "K001 is the first key's version.",
    "K0019ab8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4",  # longer than any key: no B2 key
])
def test_b2_look_alikes_stay(line: str) -> None:
    assert redact(line)[0] == line


ROUTING = "9f86d081884c7d659a2feaa0c55ad015"


@pytest.mark.parametrize("line", [
    f"+ export PAGERDUTY_ROUTING_KEY={ROUTING}",
    f"curl -d '{{\"routing_key\":\"{ROUTING}\",\"event_action\":\"trigger\"}}'",
    f'  routingKey: "{ROUTING}"',
    f"pd_routing-key = '{ROUTING}'",
])
def test_a_pagerduty_routing_key_is_redacted(line: str) -> None:
    assert redact(line)[0] == line.replace(ROUTING, "[REDACTED:token]")


@pytest.mark.parametrize("line", [
    "routing_key: orders.created",  # RabbitMQ: a queue's address
    "ROUTING_KEY=orders.#",
    '{"exchange": "events", "routing_key": "user.signup.v2"}',
    f"routing_key: {ROUTING}ab",  # no PagerDuty key's length
    "the routing key is 32 hex characters",
])
def test_routing_key_look_alikes_stay(line: str) -> None:
    assert redact(line)[0] == line


def _state(kind: str, result: str) -> str:
    return (f'{{\n  "mode": "managed",\n  "type": "{kind}",\n  "name": "db",\n  "instances": [\n    {{\n'
            f'      "attributes": {{\n        "id": "none",\n        "length": 24,\n        "result": "{result}",\n'
            '        "special": true\n      }\n    }\n  ]\n}\n')


def test_a_random_passwords_result_in_terraform_state_is_redacted() -> None:
    text = _state("random_password", PW) + _state("random_pet", "happy-cat")
    assert redact(text)[0] == text.replace(PW, "[REDACTED:password]")


@pytest.mark.parametrize("text", [
    _state("random_pet", "happy-cat"),
    _state("random_id", "a1b2c3d4"),
    '{"type": "random_password"}\n' + "x" * 5000 + '\n{"level": "info", "result": "ok"}\n',  # too far back
    '{"level": "info", "result": "Zq7xK2mP9vL4wT8n"}\n',  # no random_password in the text
    "".join(f'{{"level":"info","ts":{i},"result":"ok-{i}"}}\n' for i in range(1200)),  # a result on every line
])
def test_other_results_stay(text: str) -> None:
    assert redact(text)[0] == text

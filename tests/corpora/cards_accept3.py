# ruff: noqa: E501  (a corpus of output lines as tools print them; splitting them would hide their shape)
"""Model-proposed command lines for the third acceptance check's card inspection (issue #11, `accept3`): argv
holding secrets the way a model would pass them (flags, ``user:pw`` pairs, URLs, ``NAME=value`` words, headers,
JSON bodies, PEM keys) and argv holding characters that do not show in a code block. A card must show no secret
(fingerprinted markers instead, two different secrets two different markers) and every invisible character
escaped, with the warning."""

from __future__ import annotations

from dataclasses import dataclass

from tests.corpora.accept3_values import (
    alnum,
    b64,
    b64url,
    hexs,
    human_password,
    jwt,
    password,
    pem_body,
    reseed,
    uuid4,
)


@dataclass(frozen=True)
class CardCase:
    name: str
    argv: tuple[str, ...]
    secrets: tuple[str, ...] = ()
    invisible: tuple[str, ...] = ()


SECRET_CARDS: list[CardCase] = []
reseed()


def _card(name: str, argv: list[str], *secrets: str) -> None:
    assert all(any(s in a for a in argv) for s in secrets), name
    SECRET_CARDS.append(CardCase(name, tuple(argv), tuple(secrets)))


_pw = password(18, "!#%^*-_+=.")
_card("psql-url", ["psql", f"postgresql://admin:{_pw}@pg-orders:5432/orders", "-c", "select 1"], _pw)
_pw = password(16, "#%^*-_+=.")
_card("mysql-p-glued", ["mysql", "-uroot", f"-p{_pw}", "-h", "db-primary", "orders"], _pw)
_tok = alnum(48)
_card("curl-bearer-header", ["curl", "-sS", "-H", f"Authorization: Bearer {_tok}", "https://deploy.acme.example/api"], _tok)
_pw = password(16, "!#%^*-_+=.")
_card("curl-u", ["curl", "-u", f"admin:{_pw}", "https://grafana.internal/api/health"], _pw)
_pw = password(20)
_card("kubectl-from-literal", ["kubectl", "-n", "orders", "create", "secret", "generic", "smtp",
                               f"--from-literal=password={_pw}"], _pw)
_pw = password(18)
_card("helm-set-password", ["helm", "upgrade", "--install", "orders", "./chart", "--set",
                            f"postgresql.auth.password={_pw}"], _pw)
_sk = alnum(40)
_card("aws-configure-set", ["aws", "configure", "set", "aws_secret_access_key", _sk], _sk)
_pw = password(20)
_card("docker-login-p", ["docker", "login", "-u", "robot$ci", "-p", _pw, "harbor.acme.example"], _pw)
_vt = "hvs." + b64url(20)[:24]
_card("vault-login-positional", ["vault", "login", _vt], _vt[4:])
_pw = password(16)
_card("redis-cli-a", ["redis-cli", "-h", "redis-master", "-a", _pw, "ping"], _pw)
_pw = password(14)
_card("sshpass", ["sshpass", "-p", _pw, "ssh", "deploy@10.0.3.21"], _pw)
_pw = password(16)
_card("env-assignment", ["env", f"DB_PASSWORD={_pw}", "/opt/orders/bin/migrate"], _pw)
_xb = "xoxb-" + "".join(str(i % 10) for i in range(12)) + "-" + "".join(str(i % 10) for i in range(13)) + "-" + alnum(24)
_card("slack-token-flag", ["opsctl", "notify", "--slack-token", _xb, "--channel", "C0OPS"], _xb[-24:])
_key = alnum(32)
_card("api-key-equals", ["opsctl", "partner", "sync", f"--api-key={_key}"], _key)
_gh = "ghp_" + alnum(36)
_card("git-clone-token-url", ["git", "clone", f"https://ci-bot:{_gh}@github.com/acme/orders.git"], _gh[4:])
_pw = password(18)
_card("terraform-var", ["terraform", "apply", "-auto-approve", "-var", f"db_password={_pw}"], _pw)
_pw = human_password()
_card("ansible-extra-vars", ["ansible-playbook", "site.yml", "-e", f"ansible_become_pass={_pw}"], _pw)
_pw = password(16)
_card("openssl-pass", ["openssl", "enc", "-aes-256-cbc", "-pbkdf2", "-pass", f"pass:{_pw}", "-in", "dump.sql"], _pw)
_sec = alnum(3) + "8Q~" + alnum(34)
_card("az-login-sp", ["az", "login", "--service-principal", "-u", uuid4(), "-p", _sec, "--tenant", uuid4()], _sec)
_pw = password(20)
_card("gh-secret-set-body", ["gh", "secret", "set", "DB_PASSWORD", "--body", _pw, "--repo", "acme/orders"], _pw)
_pw = password(16)
_card("kubectl-exec-env-psql", ["kubectl", "exec", "-n", "db", "pg-0", "--", "env", f"PGPASSWORD={_pw}", "psql",
                                "-U", "postgres"], _pw)
_pw = password(16, "#%^*-_+=.")
_card("run-dashdash-mysql", ["opsctl", "run", "--", "mysql", f"-p{_pw}", "-e", "show processlist"], _pw)
_pw = password(16)
_card("curl-json-body", ["curl", "-X", "POST", "-d", f'{{"username":"jdoe","password":"{_pw}"}}',
                         "https://sso.acme.example/api/login"], _pw)
_key = alnum(32)
_card("url-query-api-key", ["curl", f"https://api.vendor.example/v1/export?format=csv&api_key={_key}"], _key)
_pw = password(16)
_card("htpasswd-b", ["htpasswd", "-b", "-B", "/etc/nginx/.htpasswd", "metrics", _pw], _pw)
_pw = password(16)
_card("ldapsearch-w", ["ldapsearch", "-x", "-D", "cn=admin,dc=acme,dc=example", "-w", _pw, "-b", "dc=acme,dc=example"],
      _pw)
_pw = password(18, "-_.~")
_card("mongosh-uri", ["mongosh", f"mongodb+srv://reporting:{_pw}@cluster0.k3xq9.mongodb.net/analytics"], _pw)
_pw = password(16, "#%^*-_+=")
_card("libpq-dsn-arg", ["psql", f"host=pg-orders dbname=orders user=orders_app password={_pw} sslmode=require"], _pw)
_body = pem_body(400)
_card("pem-key-argument", ["opsctl", "keys", "import", "--name", "deploy",
                           "-----BEGIN OPENSSH PRIVATE KEY-----\n" + _body + "\n-----END OPENSSH PRIVATE KEY-----"],
      *_body.split("\n")[1:-1:3])
_jwt, _tail = jwt('{"sub":"ops","role":"admin"}')
_card("jwt-auth-flag", ["opsctl", "--auth", _jwt, "orders", "list"], _tail)
_jwt2, _tail2 = jwt('{"sub":"ci","role":"deployer"}')
_card("jwt-positional", ["opsctl", "session", "import", _jwt2], _tail2)
_wh = f"T{alnum(8).upper()}/B{alnum(10).upper()}/{alnum(24)}"
_card("slack-webhook-url", ["curl", "-X", "POST", "-d", '{"text":"deploy done"}', f"https://hooks.slack.com/services/{_wh}"],
      _wh.split("/")[-1])
_st = "sk_live_" + alnum(99)
_card("stripe-key-header", ["curl", "https://api.stripe.com/v1/charges", "-H", f"Authorization: Bearer {_st}"], _st[8:])
_pw = password(16)
_card("header-x-api-key", ["curl", "-H", f"X-API-Key: {_pw}", "https://api.vendor.example/v1/ping"], _pw)
_b = b64(24)
_card("basic-header", ["curl", "-H", f"Authorization: Basic {_b}", "https://warehouse.internal/api"], _b)
_pw = password(16)
_card("sqlcmd-P", ["sqlcmd", "-S", "sql-prod", "-U", "sa", "-P", _pw, "-Q", "SELECT 1"], _pw)
_pw = password(16)
_card("pg-dump-env-prefix", ["opsctl", "db", "dump", "--env", f"PGPASSWORD={_pw}", "--db", "orders"], _pw)
_hx = hexs(64)
_card("webhook-secret-flag", ["opsctl", "hooks", "create", "--url", "https://ci.acme.example/hook", "--secret", _hx], _hx)
_pw = password(16)
_card("password-stdin-lookalike-but-real", ["opsctl", "user", "create", "jdoe", "--initial-password", _pw], _pw)
_pw = alnum(5) + "&<" + alnum(5) + ">" + alnum(4)
_card("password-with-slack-escapes", ["opsctl", "db", "connect", f"--password={_pw}"], _pw[:5], _pw[7:12])
_a, _b = alnum(6), alnum(7)
_card("zero-width-inside-secret", ["opsctl", "login", f"--password={_a}\u200b{_b}"], _a, _b)
_a, _b = alnum(6), alnum(7)
_card("url-password-with-at", ["psql", f"postgres://orders:{_a}@{_b}@pg-orders:5432/orders"], _a, _b)
_body = pem_body(300).replace("\n", "\r\n")
_card("pem-key-crlf-argument", ["opsctl", "tls", "upload", "--key",
                                "-----BEGIN PRIVATE KEY-----\r\n" + _body + "\r\n-----END PRIVATE KEY-----"],
      *_body.split("\r\n")[1:-1:2])

_ZW = "\u200b"
INVISIBLE_CARDS: list[CardCase] = [
    CardCase("zero-width-space-in-flag", ("opsctl", "delete", f"--namespace=orders{_ZW}", "--all"), invisible=(_ZW,)),
    CardCase("rlo-override", ("opsctl", "logs", "web-\u202etxt.exe"), invisible=("\u202e",)),
    CardCase("bidi-isolates", ("opsctl", "scale", "\u2066orders\u2069", "--replicas", "0"),
             invisible=("\u2066", "\u2069")),
    CardCase("lrm-rlm", ("opsctl", "restart", "orders\u200e", "\u200fbilling"), invisible=("\u200e", "\u200f")),
    CardCase("hangul-filler-3164", ("opsctl", "delete", "pod", "\u3164"), invisible=("\u3164",)),
    CardCase("hangul-choseong-115f", ("opsctl", "delete", "\u115f", "--force"), invisible=("\u115f",)),
    CardCase("hangul-jungseong-1160", ("opsctl", "drain", "node\u1160"), invisible=("\u1160",)),
    CardCase("halfwidth-hangul-ffa0", ("opsctl", "rm", "\uffa0"), invisible=("\uffa0",)),
    CardCase("braille-blank-2800", ("opsctl", "exec", "\u2800", "--", "sh"), invisible=("\u2800",)),
    CardCase("variation-selector-fe0f", ("opsctl", "tag", "release\ufe0f"), invisible=("\ufe0f",)),
    CardCase("variation-selector-supplement", ("opsctl", "tag", "v1\U000e0100"), invisible=("\U000e0100",)),
    CardCase("tag-characters", ("opsctl", "note", "ok\U000e0069\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065"),
             invisible=("\U000e0069", "\U000e0067")),
    CardCase("zwj-zwnj", ("opsctl", "get", "or\u200dders", "bil\u200cling"), invisible=("\u200d", "\u200c")),
    CardCase("word-joiner-2060", ("opsctl", "get", "orders\u2060"), invisible=("\u2060",)),
    CardCase("bom-feff", ("opsctl", "\ufeffdelete", "orders"), invisible=("\ufeff",)),
    CardCase("soft-hyphen", ("opsctl", "de\u00adlete", "orders"), invisible=("\u00ad",)),
    CardCase("nbsp-inside-arg", ("opsctl", "delete", "orders\u00a0--all-namespaces"), invisible=("\u00a0",)),
    CardCase("en-quad-and-hair-space", ("opsctl", "run", "a\u2000b\u200ac"), invisible=("\u2000", "\u200a")),
    CardCase("ideographic-space", ("opsctl", "get", "orders\u3000--all"), invisible=("\u3000",)),
    CardCase("mongolian-vowel-separator", ("opsctl", "get", "x\u180ey"), invisible=("\u180e",)),
    CardCase("combining-grapheme-joiner", ("opsctl", "get", "orders\u034f"), invisible=("\u034f",)),
    CardCase("khmer-inherent-vowels", ("opsctl", "get", "a\u17b4\u17b5"), invisible=("\u17b4", "\u17b5")),
    CardCase("invisible-math-operators", ("opsctl", "calc", "1\u20622\u20633\u2064"),
             invisible=("\u2062", "\u2063", "\u2064")),
    CardCase("deprecated-format-206a", ("opsctl", "get", "x\u206ay\u206f"), invisible=("\u206a", "\u206f")),
    CardCase("interlinear-annotation", ("opsctl", "get", "\ufff9x\ufffay\ufffb"), invisible=("\ufff9", "\ufffb")),
    CardCase("line-and-paragraph-separator", ("opsctl", "echo", "safe\u2028rm -rf /\u2029"),
             invisible=("\u2028", "\u2029")),
    CardCase("nel-0085", ("opsctl", "echo", "a\u0085b"), invisible=("\u0085",)),
    CardCase("newline-cr-tab-esc", ("opsctl", "echo", "ok\nrm -rf /\r\t\x1b[2K"), invisible=("\n", "\r", "\t", "\x1b")),
    CardCase("arabic-letter-mark", ("opsctl", "get", "x\u061cy"), invisible=("\u061c",)),
    CardCase("shorthand-format-1bca0", ("opsctl", "get", "x\U0001bca0y"), invisible=("\U0001bca0",)),
    CardCase("musical-invisible-1d173", ("opsctl", "get", "x\U0001d173y"), invisible=("\U0001d173",)),
    CardCase("combining-marks-stack", ("opsctl", "delete", "orders\u0336\u0336"), invisible=("\u0336",)),
    CardCase("language-tag-e0001", ("opsctl", "get", "x\U000e0001y"), invisible=("\U000e0001",)),
    CardCase("hangul-filler-as-user", ("opsctl", "login", "--user", "\u3164"), invisible=("\u3164",)),
    CardCase("private-use-e000", ("opsctl", "get", "x\ue000y"), invisible=("\ue000",)),
    CardCase("unassigned-cn", ("opsctl", "get", "x\u0378y"), invisible=("\u0378",)),
    CardCase("egyptian-format-13430", ("opsctl", "get", "x\U00013430y"), invisible=("\U00013430",)),
]

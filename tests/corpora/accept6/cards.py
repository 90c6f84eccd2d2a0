# ruff: noqa: E501
"""Model-proposed argvs for the approval card: a secret in the arguments and characters that do not show in a
code block (format and bidi controls, invisible combining marks, Hangul fillers, the braille blank, variation
selectors, odd spaces, control characters), some hidden inside the secret itself to split its shape."""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from tests.corpora.accept6.values import ALNUM, Secret, aws_secret, hexs, human_password, password, pick

# what must never reach a card raw, by the category that makes it invisible
INVISIBLE = {
    "ZWSP": "\u200b", "ZWNJ": "\u200c", "ZWJ": "\u200d", "WJ": "\u2060", "BOM": "\ufeff", "SHY": "\u00ad",
    "MVS": "\u180e", "FUNC-APP": "\u2061", "INVIS-TIMES": "\u2062", "TAG-A": "\U000e0041", "TAG-CANCEL": "\U000e007f",
    "RLO": "\u202e", "LRO": "\u202d", "RLE": "\u202b", "PDF": "\u202c", "LRI": "\u2066", "RLI": "\u2067",
    "FSI": "\u2068", "PDI": "\u2069", "LRM": "\u200e", "RLM": "\u200f", "ALM": "\u061c",
    "CGJ": "\u034f", "KHMER-AQ": "\u17b4", "KHMER-AA": "\u17b5", "MONG-FVS1": "\u180b",
    "HANGUL-FILLER": "\u3164", "CHOSEONG-FILLER": "\u115f", "JUNGSEONG-FILLER": "\u1160", "HALFWIDTH-FILLER": "\uffa0",
    "BRAILLE-BLANK": "\u2800", "VS16": "\ufe0f", "VS1": "\ufe00", "VS17": "\U000e0100",
    "HAIR-SPACE": "\u200a", "IDEOGRAPHIC-SPACE": "\u3000", "MMSP": "\u205f", "LINE-SEP": "\u2028",
    "ESC": "\x1b", "CR": "\r", "DEL": "\x7f", "BS": "\x08",
}
RAW = set(INVISIBLE.values())


def invisible_characters(text: str) -> list[str]:
    """Names of the characters in ``text`` that a code block would not show."""
    return [unicodedata.name(ch, f"U+{ord(ch):04X}") for ch in text if ch in RAW]


@dataclass(frozen=True)
class CardCase:
    name: str
    argv: tuple[str, ...]
    secrets: tuple[Secret, ...]
    invisible: tuple[str, ...]  # names from INVISIBLE, each present in the argv


def _cases() -> dict[str, CardCase]:
    cases: dict[str, CardCase] = {}

    def add(name: str, build: Callable[[random.Random], tuple[list[str], list[Secret]]], *marks: str) -> None:
        rs = random.Random(f"accept6:cards:{name}")
        argv, secrets = build(rs)
        joined = "".join(argv)
        assert all(INVISIBLE[m] in joined for m in marks), name
        assert all(s.value in joined for s in secrets), name
        cases[name] = CardCase(name, tuple(argv), tuple(secrets), marks)

    def pw(rs: random.Random) -> str:
        return password(rs, 18)

    def url_pw(rs):  # type: ignore[no-untyped-def]
        p = pw(rs)
        return ["psql", f"postgres://admin:{p}@db-prod.acme.internal\u200b:5432/orders", "-c", "select 1"], [Secret("url-password", p)]
    add("psql-url-zwsp-host", url_pw, "ZWSP")

    def bearer(rs):  # type: ignore[no-untyped-def]
        t = "ghp_" + pick(rs, ALNUM, 36)
        return ["curl", "-sS", "-H", f"Authorization: Bearer {t}", "https://api.github.com/user\u2800"], [Secret("github", t)]
    add("curl-bearer-braille", bearer, "BRAILLE-BLANK")

    def slack(rs):  # type: ignore[no-untyped-def]
        t = f"xoxb-{pick(rs, '0123456789', 12)}-{pick(rs, '0123456789', 13)}-{pick(rs, ALNUM, 24)}"
        return ["slack-notify", "--token", t, "--channel", "#ops\u3164", "deploy done"], [Secret("slack", t)]
    add("slack-token-hangul-filler", slack, "HANGUL-FILLER")

    def mysql(rs):  # type: ignore[no-untyped-def]
        p = pw(rs)
        return ["mysql", "-h", "db01", "-u", "root", f"-p{p}", "-e", "DROP\u115f TABLE sessions"], [Secret("password", p)]
    add("mysql-p-choseong-filler", mysql, "CHOSEONG-FILLER")

    def env_assign(rs):  # type: ignore[no-untyped-def]
        p = pw(rs)
        return ["env", f"DB_PASSWORD={p}", "./migrate\u202e", "--up"], [Secret("password", p)]
    add("env-assign-rlo", env_assign, "RLO")

    def pgpassword(rs):  # type: ignore[no-untyped-def]
        p = human_password(rs)
        return ["sh", "-c", f"PGPASSWORD='{p}' psql -h pg-primary -U app -c 'vacuum'\u2066"], [Secret("password", p)]
    add("sh-c-pgpassword-lri", pgpassword, "LRI")

    def literal(rs):  # type: ignore[no-untyped-def]
        p = pw(rs)
        return ["kubectl", "-n", "payments", "create", "secret", "generic", "db\u034f", f"--from-literal=password={p}"], [Secret("password", p)]
    add("kubectl-from-literal-cgj", literal, "CGJ")

    def vault_put(rs):  # type: ignore[no-untyped-def]
        p, k = pw(rs), hexs(rs, 40)
        return ["vault", "kv", "put", "secret/prod/payments", f"db_password={p}", f"psp_api_key={k}\ufe0f"], [Secret("password", p), Secret("api-key", k)]
    add("vault-kv-put-vs16", vault_put, "VS16")

    def aws_set(rs):  # type: ignore[no-untyped-def]
        s = aws_secret(rs)
        return ["aws", "configure", "set", "aws_secret_access_key", s, "--profile", "prod\u17b4"], [Secret("aws-secret", s)]
    add("aws-configure-set-khmer", aws_set, "KHMER-AQ")

    def docker_login(rs):  # type: ignore[no-untyped-def]
        p = pw(rs)
        return ["docker", "login", "-u", "ci", "-p", p, "registry.acme.io\u200d"], [Secret("password", p)]
    add("docker-login-zwj", docker_login, "ZWJ")

    def helm_set(rs):  # type: ignore[no-untyped-def]
        p = pw(rs)
        return ["helm", "upgrade", "--install", "redis", "bitnami/redis", "--set", f"auth.password={p}", "--namespace", "cache\u2060"], [Secret("password", p)]
    add("helm-set-password-wj", helm_set, "WJ")

    def api_key_header(rs):  # type: ignore[no-untyped-def]
        k = pick(rs, ALNUM, 40)
        return ["curl", "-H", f"X-Api-Key: {k}", "https://partner.example/v1/orders\ufeff"], [Secret("api-key", k)]
    add("curl-x-api-key-bom", api_key_header, "BOM")

    def gh_token(rs):  # type: ignore[no-untyped-def]
        t = "github_pat_11" + pick(rs, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 20) + "_" + pick(rs, ALNUM, 59)
        return ["gh", "api", "--hostname", "github.com\u00ad", "-H", f"Authorization: token {t}", "/user"], [Secret("github-pat", t)]
    add("gh-api-token-shy", gh_token, "SHY")

    def curl_u(rs):  # type: ignore[no-untyped-def]
        p = pw(rs)
        return ["curl", "-u", f"elastic:{p}", "http://es:9200/_cat/indices\u180e"], [Secret("password", p)]
    add("curl-u-mvs", curl_u, "MVS")

    def sshpass(rs):  # type: ignore[no-untyped-def]
        p = pw(rs)
        return ["sshpass", "-p", p, "ssh", "backup@nas-01", "rm -rf /volume1/old\u2061"], [Secret("password", p)]
    add("sshpass-func-app", sshpass, "FUNC-APP")

    def htpasswd(rs):  # type: ignore[no-untyped-def]
        p = human_password(rs)
        return ["htpasswd", "-bB", "/etc/nginx/.htpasswd", "admin\u2062", p], [Secret("password", p)]
    add("htpasswd-b-invisible-times", htpasswd, "INVIS-TIMES")

    def redis_a(rs):  # type: ignore[no-untyped-def]
        p = pw(rs)
        return ["redis-cli", "-h", "redis-sessions", "-a", p, "FLUSHALL\U000e0041\U000e007f"], [Secret("password", p)]
    add("redis-cli-a-tags", redis_a, "TAG-A", "TAG-CANCEL")

    def git_clone(rs):  # type: ignore[no-untyped-def]
        t = "glpat-" + pick(rs, ALNUM + "-_", 20)
        return ["git", "clone", f"https://oauth2:{t}@gitlab.acme.io/platform/api.git", "/tmp/api\u202d"], [Secret("gitlab", t)]
    add("git-clone-token-lro", git_clone, "LRO")

    def gh_secret_set(rs):  # type: ignore[no-untyped-def]
        p = pw(rs)
        return ["gh", "secret", "set", "DB_PASSWORD\u202b", "--body", p, "--repo", "acme/api"], [Secret("password", p)]
    add("gh-secret-set-body-rle", gh_secret_set, "RLE")

    def openssl_pass(rs):  # type: ignore[no-untyped-def]
        p = pw(rs)
        return ["openssl", "pkcs12", "-export", "-in", "api.crt", "-inkey", "api.key", "-out", "api.p12", "-passout", f"pass:{p}\u202c"], [Secret("password", p)]
    add("openssl-passout-pdf", openssl_pass, "PDF")

    def bash_stdin(rs):  # type: ignore[no-untyped-def]
        p = pw(rs)
        return ["bash", "-c", f"echo '{p}' | docker login --username ci --password-stdin harbor.acme.io\u2067"], [Secret("password", p)]
    add("bash-echo-password-stdin-rli", bash_stdin, "RLI")

    def api_key_eq(rs):  # type: ignore[no-untyped-def]
        k = "sk_live_" + pick(rs, ALNUM, 24)
        return ["billing-cli", f"--api-key={k}", "refund", "ch_3Q\u2068", "--amount", "1200"], [Secret("stripe", k)]
    add("api-key-eq-stripe-fsi", api_key_eq, "FSI")

    def client_secret(rs):  # type: ignore[no-untyped-def]
        c = pick(rs, ALNUM, 3) + "8Q~" + pick(rs, ALNUM + "~._-", 31)
        return ["az", "login", "--service-principal", "-u", "3f2c9a1e-app", "-p", c, "--tenant", "acme\u2069"], [Secret("azure-secret", c)]
    add("az-login-p-pdi", client_secret, "PDI")

    def mongosh(rs):  # type: ignore[no-untyped-def]
        p = pw(rs)
        return ["mongosh", f"mongodb://root:{p}@mongo-0.mongo:27017/admin\u200e", "--eval", "db.dropDatabase()"], [Secret("url-password", p)]
    add("mongosh-url-lrm", mongosh, "LRM")

    def psql_kv(rs):  # type: ignore[no-untyped-def]
        p = pw(rs)
        return ["psql", f"host=pg-primary user=app password={p} dbname=orders\u200f", "-c", "truncate jobs"], [Secret("password", p)]
    add("psql-keyword-conninfo-rlm", psql_kv, "RLM")

    def export_sh(rs):  # type: ignore[no-untyped-def]
        k = "sk_live_" + pick(rs, ALNUM, 99)
        return ["sh", "-c", f"export STRIPE_KEY={k}; ./sync-payouts\u061c --since 2026-12-01"], [Secret("stripe", k)]
    add("sh-export-stripe-alm", export_sh, "ALM")

    def helm_repo(rs):  # type: ignore[no-untyped-def]
        p = pw(rs)
        return ["helm", "repo", "add", "acme\u17b5", "https://charts.acme.io", "--username", "ci", "--password", p], [Secret("password", p)]
    add("helm-repo-add-password-khmer-aa", helm_repo, "KHMER-AA")

    def npm_token(rs):  # type: ignore[no-untyped-def]
        t = "npm_" + pick(rs, ALNUM, 36)
        return ["npm", "config", "set", f"//registry.npmjs.org/:_authToken={t}", "\u180b"], [Secret("npm", t)]
    add("npm-authtoken-mongolian-fvs", npm_token, "MONG-FVS1")

    def token_flag(rs):  # type: ignore[no-untyped-def]
        t = "hvs." + pick(rs, ALNUM + "_-", 91)
        return ["vault", "login", "-method=token", f"token={t}", "-address=https://vault.acme.internal\u1160:8200"], [Secret("vault", t)]
    add("vault-login-token-jungseong", token_flag, "JUNGSEONG-FILLER")

    def dsn_go(rs):  # type: ignore[no-untyped-def]
        p = pw(rs)
        return ["migrate", "-database", f"mysql://orders:{p}@tcp(mysql-orders:3306)/orders", "-path", "db/migrations\uffa0", "up"], [Secret("password", p)]
    add("migrate-dsn-halfwidth-filler", dsn_go, "HALFWIDTH-FILLER")

    def vs_selector(rs):  # type: ignore[no-untyped-def]
        p = pw(rs)
        return ["ldapsearch", "-x", "-D", "cn=admin,dc=acme,dc=io", "-w", p, "-b", "dc=acme,dc=io\ufe00\U000e0100", "(uid=*)"], [Secret("password", p)]
    add("ldapsearch-w-variation-selectors", vs_selector, "VS1", "VS17")

    def spaces(rs):  # type: ignore[no-untyped-def]
        p = pw(rs)
        return ["sqlcmd", "-S", "sql-ledger", "-U", "sa", "-P", p, "-Q", "DELETE FROM\u200aaudit\u3000WHERE 1=1\u205f"], [Secret("password", p)]
    add("sqlcmd-P-odd-spaces", spaces, "HAIR-SPACE", "IDEOGRAPHIC-SPACE", "MMSP")

    def control(rs):  # type: ignore[no-untyped-def]
        p = pw(rs)
        return ["bash", "-c", f"printf 'ok\\n'; echo \x1b[2K\rsafe-command\x08\x7f; mysqladmin -uroot -p{p} shutdown"], [Secret("password", p)]
    add("bash-escape-cr-del-bs", control, "ESC", "CR", "BS", "DEL")

    def line_sep(rs):  # type: ignore[no-untyped-def]
        t = "glpat-" + pick(rs, ALNUM + "-_", 20)
        return ["curl", "--header", f"PRIVATE-TOKEN: {t}", "-X", "DELETE", "https://gitlab.acme.io/api/v4/projects/412\u2028"], [Secret("gitlab", t)]
    add("gitlab-private-token-line-sep", line_sep, "LINE-SEP")

    # the invisible character inside the secret itself, splitting its shape
    def split_ghp(rs):  # type: ignore[no-untyped-def]
        head, tail = pick(rs, ALNUM, 18), pick(rs, ALNUM, 18)
        t = f"ghp_{head}\u200b{tail}"
        return ["git", "push", f"https://x-access-token:{t}@github.com/acme/api.git", "main"], [Secret("github-head", f"ghp_{head}"), Secret("github-tail", tail)]
    add("github-token-split-by-zwsp", split_ghp, "ZWSP")

    def split_pw(rs):  # type: ignore[no-untyped-def]
        a, b = pick(rs, ALNUM, 12), pick(rs, ALNUM, 12)
        return ["mysql", "-uroot", f"--password={a}\u2800{b}", "-e", "select 1"], [Secret("password-head", a), Secret("password-tail", b)]
    add("mysql-password-split-by-braille", split_pw, "BRAILLE-BLANK")

    def split_aws(rs):  # type: ignore[no-untyped-def]
        s = aws_secret(rs)
        t = s[:20] + "\u3164" + s[20:]
        return ["env", f"AWS_SECRET_ACCESS_KEY={t}", "aws", "s3", "rm", "--recursive", "s3://acme-backups/"], [Secret("aws-head", s[:20]), Secret("aws-tail", s[20:])]
    add("aws-secret-split-by-hangul-filler", split_aws, "HANGUL-FILLER")

    def split_slack(rs):  # type: ignore[no-untyped-def]
        tail = pick(rs, ALNUM, 24)
        t = f"xoxb-{pick(rs, '0123456789', 12)}-{pick(rs, '0123456789', 13)}-\u00ad{tail}"
        return ["curl", "-d", f"token={t}", "-d", "channel=C04ALERTS", "https://slack.com/api/chat.postMessage"], [Secret("slack-tail", tail)]
    add("slack-token-split-by-shy", split_slack, "SHY")
    return cases


CARD_CASES: dict[str, CardCase] = _cases()

"""Source code in tool output (``git diff``, ``grep -rn password src/``, ``cat settings.py``): variables named like
secrets whose value is an expression stay visible; a literal string assigned to one is a secret (issue #11)."""

from __future__ import annotations

import random

import pytest

from bot.sanitize import redact, sanitize_output
from bot.sanitize.code_expressions import code_reference, settings_reference
from tests.corpora.code_grep import code_grep_line

EXPRESSIONS = [
    "    token = get_token()",
    '    password = os.environ["DB_PASSWORD"]',
    "    api_key: str = Field(...)",
    '    secret = request.headers.get("X-Secret")',
    "    if token is None:",
    "        self.password = password",
    "\t\tPassword: cfg.Password,",
    "const apiKey = process.env.API_KEY;",
    "  password: {{ .Values.db.password | quote }}",
    "            secretKeyRef:",
    "      DB_PASSWORD: ${DB_PASSWORD}",
    "  password = var.db_password",
    "  ~ password = (sensitive value)",
    "+    token = self._client.fetch_token(scope)",
    '-    password = config.get("db", "password")',
    "src/app/db.py:42:    password = settings.DATABASE_PASSWORD",
    'SECRET_KEY = os.getenv("SECRET_KEY", default=None)',
    "    token: Optional[str] = None",
    '    access_token = response.json()["access_token"]',
    '    api_key = kwargs.pop("api_key", None)',
    "    client_secret=settings.OAUTH_CLIENT_SECRET,",
    '\tcfg.Password = os.Getenv("DB_PASSWORD")',
    "password: process.env.DB_PASSWORD,",
    "    secret = self.secrets[name]",
    "    token = tokens[0]",
    "    password = password.strip()",
    "    api_key = get_api_key(user_id=user.id)",
    "    private_key = load_pem_private_key(data, password=None)",
    '    token = jwt.encode(payload, key, algorithm="HS256")',
    " db_password = random_password.db.result",
    "  password = module.db.master_password",
    "  secret_key = aws_iam_access_key.deploy.secret",
    "  api_key = data.aws_ssm_parameter.api_key.value",
    '    password=os.environ["DB_PASSWORD"],',
    "    password = db_password",
    "  password: changeme",
    '  password: "****"',
    "    password = <redacted>",
    "    $this->password = $password;",
    "    let token = std::env::var(\"TOKEN\")?;",
    "  password: ENV.fetch('DB_PASSWORD')",
    '    String password = System.getenv("DB_PASSWORD");',
    "  + secret_arn = \"arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-AbCdEf\"",
    "client_key: /etc/ssl/private/client.key",
    "kube-apiserver --kubelet-client-key=/etc/kubernetes/pki/apiserver-kubelet-client.key",
]


@pytest.mark.parametrize("line", EXPRESSIONS)
def test_code_whose_values_are_expressions_passes_unchanged(line: str) -> None:
    assert redact(line) == (line, 0)


LITERALS = [
    ('password = "hunter2-Prod!"', "hunter2-Prod!"),
    ('secret = "a-literal-secret-value"', "a-literal-secret-value"),
    ("API_KEY = 'abcd1234efgh5678'", "abcd1234efgh5678"),
    ('\tPassword: "GoLiteralPw1",', "GoLiteralPw1"),
    ("password = hunter2prod", "hunter2prod"),
    ("DB_PASSWORD=Winter2024.Secure", "Winter2024.Secure"),
    ("password: correct.horse.battery", "correct.horse.battery"),
    ("DB_PASSWORD=Xk9mQ2(vL8)", "Xk9mQ2(vL8"),
    ("password = dbpassword", "dbpassword"),
    ("token = $ecret-Tok3n-v4lue", "$ecret-Tok3n-v4lue"),
    ("db:\n  password: admin.password\n", "admin.password"),  # YAML: a literal, no code delimiter after it
    ("x password= Sup3r", "Sup3r"),  # a blank after "=" alone, no words after: still a password
]


@pytest.mark.parametrize(("line", "secret"), LITERALS)
def test_literals_assigned_to_secret_names_are_still_redacted(line: str, secret: str) -> None:
    out = sanitize_output(line.encode()).text
    assert secret not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize(
    ("value", "following", "expected"),
    [
        ("get_token(", ")", True),
        ("os.environ[", '"', True),
        ("base64.b64decode(raw", ")", True),
        ("settings.SECRET_KEY", "", True),
        ("cfg.Password", ",", True),
        (".Values.db.password", "", True),
        ("db_password", "", True),
        ("str", "", True),
        ("Xk9mQ2(vL8", ")", False),  # a generated password is no call: its name mixes digits in twice
        ("Ab(cd", "", False),  # no closing bracket, no argument
        ("Winter2024.Secure", "", False),  # neither a settings object nor a secret's name
        ("correct.horse.battery", "", False),
        ("hunter2", "", False),  # one word: a variable or a password, and it may be the password
    ],
)
def test_what_counts_as_an_expression(value: str, following: str, expected: bool) -> None:
    assert code_reference(value, following) is expected


def test_a_long_grep_of_source_code_is_not_cut_by_the_density_budget() -> None:
    """A thousand lines of code full of secret-named variables (``grep -rn password src/``): each line is a
    candidate, and judged in full they spent the density budget (from line ~270 on, chunks became
    ``[REDACTED:dense_candidates]``); an expression is dismissed cheaply, so all of it passes unchanged."""
    rng = random.Random(1)
    lines = [code_grep_line(i, rng) for i in range(1000)]
    text = "\n".join(lines) + "\n"
    result = sanitize_output(text.encode(), output_limit=1 << 20)
    assert (result.text, result.redactions) == (text, 0)


def test_the_settings_shortcut_says_yes_only_where_code_reference_says_yes_in_every_context() -> None:
    """``settings_reference`` lets the scan dismiss ``password = settings.X_PASSWORD`` without decoding the value
    or the general parse (``grep -rn password src/`` 15 -> 19 MB/s at 64 KiB): it must never say yes where
    ``code_reference`` would say no, whatever follows the value and whichever separator came before it."""
    rng = random.Random(7)
    roots = ["settings", "cfg", "self", "os", "Config", "SETTINGS", "env", "process", "x", "db", "Winter2024", "a1b2"]
    parts = [*roots, ".", "?.", "->", "::", ".", "_", "$", "1", "22", "Password", "secret", "value", "!", "*", "&",
             "(", "[", "-", ":", "é", "ſtr"]
    values = {"settings.SECRET_KEY", ".Values.db.password", "*cfg.Password", "cfg.Db.Password!", "self.x9y9",
              "Winter2024.Secure", "settings.a1b2", "settings.", "settings..x", "os->environ", "os::x"}
    values |= {"".join(rng.choice(parts) for _ in range(rng.randint(1, 7))) for _ in range(2000)}
    for _ in range(2000):  # shaped like references, with a stray part now and then
        segments = [rng.choice(("", "", "*", "&", ".")), rng.choice(roots)]
        for _ in range(rng.randint(1, 3)):
            segments += [rng.choice(("." , "?.", "->", "::")), rng.choice((*roots, "Password", "db_password", "x1y2"))]
        if rng.random() < 0.3:
            segments.insert(rng.randrange(len(segments) + 1), rng.choice(parts))
        values.add("".join(segments) + rng.choice(("", "", "!")))
    said_yes = 0
    for value in values:
        if settings_reference(value.encode()):
            said_yes += 1
            for following in ("", ",", ")", "\n", " ", '"'):
                for colon in (False, True):
                    assert code_reference(value, following, colon), (value, following, colon)
    assert said_yes > 200
    assert not settings_reference(b"Winter2024.Secure") and not settings_reference(b"settings.a1b2")


def test_the_hint_check_finds_what_the_whole_hint_finds() -> None:
    """``assignment_screen._hinted`` tries the hint's one-character class alone first: the same answer on any bytes."""
    from bot.sanitize.assignment_screen import _EXPRESSION_HINT, _hinted

    rng = random.Random(5)
    alphabet = b"abcXYZ019.([$:>_&*-/str STRING intbyte\xc5\xbf"
    for _ in range(3000):
        value = bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        assert _hinted(value) is (_EXPRESSION_HINT.search(value) is not None), value
    for word in (b"str", b"String", b"BYTES", b"int", b"any", b"object", b"char", b"byte", b"strs"):
        assert _hinted(word) is (_EXPRESSION_HINT.search(word) is not None)


def test_possessive_identifiers_match_exactly_what_backtracking_ones_matched() -> None:
    """``code_expressions._IDENTIFIER`` is possessive (a failing match no longer tries every shorter identifier): the
    reference and call patterns must match the same values, with the same groups, as with a plain ``*``."""
    import re

    from bot.sanitize import code_expressions

    pairs = [(p, re.compile(p.pattern.replace("]*+", "]*"), p.flags))
             for p in (code_expressions._REFERENCE, code_expressions._CALL_OR_SUBSCRIPT)]
    assert all(new.pattern != old.pattern for new, old in pairs)
    rng = random.Random(9)
    parts = ["settings", "a", "Xk9", "$x", "_", ".", "?.", "->", "::", "(", "[", "<int>", "::<u32>", "!", "&", "*",
             "new ", "await ", "1", "=", "-", ":", ")", "]"]
    for _ in range(5000):
        value = "".join(rng.choice(parts) for _ in range(rng.randint(1, 8)))
        for new, old in pairs:
            for method in ("match", "fullmatch"):
                got, want = getattr(new, method)(value), getattr(old, method)(value)
                assert (got and (got.span(), got.groupdict())) == (want and (want.span(), want.groupdict())), value

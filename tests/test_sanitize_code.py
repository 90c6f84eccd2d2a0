"""Source code in tool output (``git diff``, ``grep -rn password src/``, ``cat settings.py``): variables named like
secrets whose value is an expression stay visible; a literal string assigned to one is a secret (issue #11)."""

from __future__ import annotations

import random

import pytest

from bot.sanitize import redact, sanitize_output
from bot.sanitize.shapes import code_reference
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

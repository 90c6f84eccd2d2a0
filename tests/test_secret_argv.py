"""The argv judge (``bot/sanitize/secret_argv.py``): which command lines ask for a secret's value, and which do
not; and the whole-output redactor the runner then uses (``bot/sanitize/withheld.py``)."""

from __future__ import annotations

import re
import shlex

import pytest

from bot.sanitize.secret_argv import BUILT_IN, NO_SHAPES, SecretArgvShapes, judge_argv
from bot.sanitize.withheld import WithheldOutput

# (command line, the rule's kind): each prints a secret's value with no name beside it, or one a text-only
# detector cannot tie to a secret's name
ASKS_FOR_A_SECRET = [
    ("vault kv get -field=password secret/db", "secret_field"),
    ("vault read -field password database/creds/readonly", "secret_field"),
    ("vault kv get --field=db_password secret/app", "secret_field"),
    ("opsctl secret describe db --field=api-token", "secret_field"),
    ("op item get db --fields username,password", "secret_field"),
    ("op item get db --fields label=password", "secret_field"),
    ("op item get db --fields type=concealed", "secret_field"),
    ("kubectl get secret db -o jsonpath={.data.password}", "secret_query"),
    (r"kubectl get secret tls -o jsonpath={.data.tls\.key}", "secret_query"),
    ("kubectl get secret db -ojsonpath={.data}", "secret_query"),
    ("kubectl get secret/db --output=jsonpath={.stringData}", "secret_query"),
    ("kubectl get secret db -o=jsonpath-as-json={.data.url}", "secret_query"),
    ("kubectl get secret db -o jsonpath={.data['tls.key']}", "secret_query"),
    ("kubectl get secret db -o 'go-template={{index .data \"api-token\" | base64decode}}'", "secret_query"),
    ("kubectl get secret db -o 'go-template={{range $k, $v := .data}}{{$v}}{{end}}'", "secret_query"),
    ("kubectl get secret db -o custom-columns=VALUE:.data.password", "secret_query"),
    ("kubectl get secrets -o 'jsonpath={.items[?(@.metadata.name==\"db\")].data.password}'", "secret_query"),
    ("kubectl get secret db --template={{.data.password}}", "secret_query"),
    ("aws secretsmanager get-secret-value --secret-id db --query SecretString --output text", "secret_command"),
    ("aws --region eu-west-1 secretsmanager get-secret-value --secret-id db", "secret_command"),
    ("aws secretsmanager --region eu-west-1 get-secret-value --secret-id db", "secret_command"),
    ("aws sts assume-role --role-arn arn:x --query Credentials.SecretAccessKey --output text", "secret_query"),
    ("aws ssm get-parameter --name /db/pw --with-decryption --query Parameter.Value --output text",
     "secret_reveal"),
    ("aws ecr get-login-password --region eu-west-1", "secret_command"),
    ("argocd admin initial-password -n argocd", "secret_command"),
    ("gcloud secrets versions access latest --secret=db", "secret_command"),
    ("az keyvault secret show --vault-name v --name db --query value -o tsv", "secret_command"),
    ("op read op://prod/db/password", "secret_command"),
    ("/usr/bin/pass show prod/db", "secret_command"),
    ("bw get password db", "secret_command"),
    ("opsctl secret get db", "secret_command"),
    ("opsctl db query --format={{.password}} -- main sel", "secret_query"),
    ("docker inspect db --format {{.Config.Password}}", "secret_query"),
    ("pulumi stack output --show-secrets", "secret_reveal"),
    # found by the review (each printed a bare secret and kept its output)
    ("vault write -field=secret_id -f auth/approle/role/ci/secret-id", "secret_field"),
    ("kubectl get pods -o 'jsonpath={.items[*].spec.containers[*].env[?(@.name==\"DB_PASSWORD\")].value}'",
     "secret_query"),
    ("aws ssm get-parameters --names a --query \"Parameters[?Name=='/db/password'].Value\" --output text",
     "secret_query"),
    ("tofu output admin_token", "secret_field"),
    ("printenv DB_PASSWORD", "secret_command"),
    ("jq -r .db.password config.json", "secret_query"),
    ("yq .spec.auth.token values.yaml", "secret_query"),
    # another program's argv after "--" is judged too
    ("kubectl exec vault-0 -- vault kv get -field=token secret/ci", "secret_field"),
]

# Ordinary command lines that must keep their output: a field or a path that is no secret's, a listing, a word
# that only looks like one of the shapes
ORDINARY = [
    "argocd admin settings validate",
    "argocd account update-password --account admin",
    "vault kv get -field=name secret/db",
    "vault kv get -field=username secret/db",
    "vault kv get -format=json secret/db",
    "vault secrets list",
    "kubectl get secrets",
    "kubectl get secrets -o name",
    "kubectl get secret db -o yaml",
    "kubectl describe secret db",
    "kubectl get secret db -o jsonpath={.metadata.name}",
    "kubectl get secrets -o jsonpath={.items[*].metadata.name}",
    "kubectl get secret db -o jsonpath={.metadata.annotations.token-expiry}",
    "kubectl get secret db -o jsonpath={.type}",
    "kubectl get configmap app -o jsonpath={.data.url}",
    "kubectl get pods -o jsonpath={.items[*].spec.containers[*].image}",
    "kubectl get ingress web -o jsonpath={.spec.tls[*].secretName}",
    "aws secretsmanager list-secrets --query SecretList[].Name",
    "aws secretsmanager list-secrets --query \"SecretList[?Name=='db-password'].ARN\"",
    "aws secretsmanager describe-secret --secret-id db",
    "aws iam list-access-keys --query AccessKeyMetadata[].AccessKeyId",
    "aws ec2 describe-instances --query Reservations[].Instances[].KeyName",
    "gcloud secrets list --format=value(name)",
    "gcloud secrets list --format=table(name,createTime)",
    "az keyvault secret list --vault-name v --query [].id",
    "opsctl secret list",
    "opsctl service logs --grep=password -- api",
    "opsctl service logs -f api",
    "tail -f password.log",
    "opsctl db query --format=json -- main select",
    "gh secret list",
    "passwd --status deploy",
    "kubectl get secret db -o jsonpath-file=/tmp/template.txt",
    "kubectl get pods -o 'jsonpath={.items[*].spec.containers[*].env[?(@.name==\"LOG_LEVEL\")].value}'",
    "terraform output -json",
    "terraform output db_host",
    "terraform plan -out password.plan",
    "printenv PATH",
    "printenv",
    "jq .password_policy config.json",
    "jq -r .items[].metadata.name pods.json",
    "yq e .spec.replicas deploy.yaml",
]


@pytest.mark.parametrize(("line", "kind"), ASKS_FOR_A_SECRET, ids=[line for line, _ in ASKS_FOR_A_SECRET])
def test_command_lines_that_ask_for_a_secret(line: str, kind: str) -> None:
    verdict = judge_argv(shlex.split(line))
    assert verdict is not None and verdict.kind == kind


@pytest.mark.parametrize("line", ORDINARY)
def test_ordinary_command_lines_keep_their_output(line: str) -> None:
    assert judge_argv(shlex.split(line)) is None


def test_the_verdict_names_the_deciding_part_of_the_argv() -> None:
    field = judge_argv(["vault", "kv", "get", "-field=password", "secret/db"])
    assert field is not None and field.because == "-field=password"
    spaced = judge_argv(["vault", "read", "-field", "password", "x"])
    assert spaced is not None and spaced.because == "-field=password"
    query = judge_argv(["kubectl", "get", "secret", "db", "-o", "jsonpath={.data.password}"])
    assert query is not None and query.because == "-o jsonpath={.data.password}"
    command = judge_argv(["aws", "secretsmanager", "get-secret-value", "--secret-id", "db"])
    assert command is not None and command.because == "secretsmanager get-secret-value"
    assert "secretsmanager get-secret-value" in command.sentence() and "redacted" in command.sentence()


def test_a_short_f_is_no_field_option_unless_the_operator_adds_it() -> None:
    argv = ["credctl", "show", "db", "-f", "password"]
    assert judge_argv(argv) is None
    added = judge_argv(argv, SecretArgvShapes.of(field_options=["-f"]))
    assert added is not None and added.kind == "secret_field"
    assert judge_argv(["credctl", "show", "db", "-f", "name"], SecretArgvShapes.of(field_options=["-f"])) is None


def test_operator_shapes_only_add() -> None:
    extra = SecretArgvShapes.of(commands=["creds Show"], query_options=["--select"], reveal_options=["--decrypt"])
    assert judge_argv(["credctl", "creds", "show", "db"], extra) is not None
    assert judge_argv(["credctl", "creds", "show", "db"]) is None
    assert judge_argv(["credctl", "get", "--select", "spec.password"], extra) is not None
    assert judge_argv(["credctl", "get", "--select", "spec.host"], extra) is None
    assert judge_argv(["credctl", "dump", "--decrypt"], extra) is not None
    # the built-in shapes still apply next to the operator's
    assert judge_argv(["vault", "kv", "get", "-field=password", "x"], extra) is not None
    assert BUILT_IN.plus(extra).commands >= BUILT_IN.commands and NO_SHAPES.plus(extra) == extra


def test_empty_and_odd_argv_are_judged_without_error() -> None:
    for argv in ([], ["opsctl"], ["opsctl", "-"], ["opsctl", "--"], ["opsctl", "--field"], ["opsctl", "-o"],
                 ["x", "--jsonpath={"], ["x", "--query=[?"], ["x", "--query=[?a[0]"], ["x", "--fields=,,="]):
        assert judge_argv(argv) is None


FINGERPRINTED = re.compile(r"\[REDACTED:secret_field#[0-9a-f]{6}\]")


def test_withheld_output_replaces_every_line_and_keeps_the_structure() -> None:
    text, count = WithheldOutput("secret_field").redact("Sup3r;S3cret\n\nsecond line  \nSup3r;S3cret\n")
    lines = text.split("\n")
    assert count == 3 and len(lines) == 5 and lines[1] == "" and lines[4] == ""
    assert all(FINGERPRINTED.fullmatch(line) for line in (lines[0], lines[2], lines[3]))
    assert lines[0] == lines[3] != lines[2]  # the same value, the same marker; another value, another
    assert "Sup3r" not in text and "second" not in text
    assert WithheldOutput("secret_field").redact("") == ("", 0)


@pytest.mark.parametrize(("line", "found"), [
    ("aws secretsmanager secretsmanager get-secret-value --secret-id db", True),  # a second start overlaps the first
    ("aws --profile secretsmanager secretsmanager --region eu get-secret-value", True),
    ("aws secretsmanager --region eu --profile p get-secret-value", True),  # two option values in between
    ("aws secretsmanager list-secrets --region get-secret-value", False),  # a positional word breaks the sequence
    ("gcloud secrets --project x versions --format json access latest", True),
    ("gcloud secrets versions list", False),
])
def test_command_words_with_option_values_between_them(line: str, found: bool) -> None:
    verdict = judge_argv(shlex.split(line))
    assert (verdict is not None and verdict.kind == "secret_command") == found


class _CountingWords(list):  # type: ignore[type-arg]
    """The judge's word list, counting the words every slice of it copies."""

    copied = 0

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        item = super().__getitem__(index)
        if isinstance(index, slice):
            _CountingWords.copied += len(item)
        return item


class _CountingText(str):
    """A path expression, counting the characters every slice of it copies."""

    copied = 0

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        item = super().__getitem__(index)
        if isinstance(index, slice):
            _CountingText.copied += len(item)
        return item


def test_matching_command_words_reads_each_word_a_bounded_number_of_times() -> None:
    """Not timed: a search from every start over the rest copied ~n**2/2 words (2.3 s for 16,000; a
    100,000-item argv is an approved call's cost on the runner). ``bench_execute.py --judge`` shows the time."""
    from bot.sanitize.secret_argv import _command_words

    words = _CountingWords([("aws", False)] + [("secretsmanager", True)] * 4000)
    _CountingWords.copied = 0
    assert _command_words(words, BUILT_IN.commands) is None
    assert _CountingWords.copied <= 2 * len(words)


def test_reading_a_path_expression_copies_it_a_bounded_number_of_times() -> None:
    from bot.sanitize.secret_argv import _path_ends

    expression = _CountingText("{" + ".a" * 4000 + ".password}")
    _CountingText.copied = 0
    assert _path_ends(expression) == (["password"], False)
    assert _CountingText.copied <= 4 * len(expression)

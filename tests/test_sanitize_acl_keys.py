"""Issue #11, found by the acceptance check: an ACL token's secret beside a name that ends in "ID" (Consul and Nomad
``SecretID``, Vault AppRole ``secret_id``, a wrapped response's ``wrapping_token:``) and a PuTTY ``.ppk`` key's
``Private-Lines`` block and ``Private-MAC`` are redacted, nothing else of these outputs changes, and the cap never
shows part of a ``.ppk``'s private block, whichever byte it cuts at."""

from __future__ import annotations

import json

import pytest

from bot.sanitize import Captured, build_redactor, redact, redact_argv, sanitize_captured, sanitize_output
from tests.corpora import leaks_acl_keys as acl
from tests.corpora.leaks_acl_keys import PPK_V2, PPK_V3, PPK_V3_ENCRYPTED, PuttyKey

TOKEN = "[REDACTED:token]"
BLOCK, MAC = "[REDACTED:private_key]", "[REDACTED:private_key_mac]"


@pytest.mark.parametrize(("text", "secret"), [
    (acl.CONSUL_TOKEN_READ, acl.CONSUL_SECRET),
    (acl.CONSUL_TOKEN_READ_JSON, acl.CONSUL_SECRET),
    (acl.NOMAD_TOKEN_INFO, acl.NOMAD_SECRET),
    (acl.NOMAD_TOKEN_INFO_JSON, acl.NOMAD_SECRET),
    (acl.APPROLE_SECRET_ID, acl.APPROLE_SECRET),
    (acl.APPROLE_SECRET_ID_JSON, acl.APPROLE_SECRET),
    (acl.APPROLE_SECRET_ID_YAML, acl.APPROLE_SECRET),
    (acl.APPROLE_WRAPPED, acl.LEGACY_TOKEN),
    (acl.VAULT_TOKEN_CREATE, acl.LEGACY_TOKEN),
    (acl.VAULT_LOGIN_JSON, acl.LEGACY_TOKEN),
    (acl.VAULT_WRAPPED_JSON, acl.LEGACY_TOKEN),
], ids=["consul", "consul-json", "nomad", "nomad-json", "approle", "approle-json", "approle-yaml", "approle-wrapped",
        "token-create", "login-json", "wrap-info-json"])
def test_the_acl_secret_alone_is_redacted_and_every_identifier_beside_it_stays(text: str, secret: str) -> None:
    """The whole output is what it was with the secret's value replaced: AccessorID, secret_id_accessor,
    token_accessor, accessor, wrapping_accessor, request_id, lease_id, ID and the Hash stay byte-identical."""
    assert text.count(secret) == 1
    assert sanitize_output(text.encode()).text == text.replace(secret, TOKEN)


@pytest.mark.parametrize("line", [
    # identifiers named like the secrets' neighbours, with the values the tools print there
    f"AccessorID:       {acl.CONSUL_ACCESSOR}",
    f'    "AccessorID": "{acl.CONSUL_ACCESSOR}",',
    f"Accessor ID  = {acl.NOMAD_ACCESSOR}",
    f"secret_id_accessor    {acl.APPROLE_ACCESSOR}",
    f'    "secret_id_accessor": "{acl.APPROLE_ACCESSOR}",',
    f"  secret_id_accessor: {acl.APPROLE_ACCESSOR}",
    f"token_accessor       {acl.TOKEN_ACCESSOR}",
    f'    "token_accessor": "{acl.TOKEN_ACCESSOR}",',
    f"accessor            {acl.TOKEN_ACCESSOR}",
    f'  "request_id": "{acl.REQUEST_ID}",',
    f"lease_id             database/creds/readonly/{acl.TOKEN_ACCESSOR}",
    f"ID          = {acl.NOMAD_ACCESSOR}",
    f'    "NodeID": "{acl.CONSUL_ACCESSOR}",',
    f"role_id     {acl.CONSUL_ACCESSOR}",  # AppRole's RoleID: the login's name, not its secret
    # the same names where they hold no secret: a name, a path, an ARN, a placeholder, prose
    "SecretID:         anonymous",
    "SecretID:         <hidden>",
    "Secret ID    = <none>",
    '  secret_id     = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:orders-db-Xy12Ab"',
    '      "secret_id": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:orders-db-Xy12Ab",',
    '      "secret_id": "orders-db-password",',
    '      "secret_id": "db-password-v2",',
    '      "secret_id": "projects/123456789012/secrets/orders-db-password",',
    "secret_id is required when bind_secret_id is true",
    "wrapping_token_ttl:              2m",
    "wrapping_token_creation_path:    auth/approle/role/jenkins/secret-id",
])
def test_identifiers_and_secret_names_that_hold_no_secret_stay(line: str) -> None:
    assert redact(line + "\n") == (line + "\n", 0)


def _ppk_expected(key: PuttyKey) -> str:
    return key.before_private + f"{BLOCK}\nPrivate-MAC: {MAC}\n"


@pytest.mark.parametrize("key", [PPK_V2, PPK_V3, PPK_V3_ENCRYPTED], ids=["v2-rsa", "v3-ed25519", "v3-encrypted"])
def test_a_ppk_keeps_its_header_public_lines_and_kdf_parameters_and_loses_its_private_block_and_mac(
    key: PuttyKey,
) -> None:
    assert sanitize_output(key.text.encode()).text == _ppk_expected(key)


def test_a_ppk_written_with_crlf_loses_its_private_block_too() -> None:
    key = PuttyKey(2, seed=21, newline="\r\n")
    cleaned, _ = redact(key.text)
    assert all(secret not in cleaned for secret in key.secrets), cleaned
    assert cleaned.startswith(key.before_private) and f"Private-MAC: {MAC}" in cleaned


def test_a_ppk_inside_a_json_string_loses_its_private_block_and_mac() -> None:
    """``vault kv get -format=json`` of a stored key: the file's newlines are ``\\n`` escapes."""
    text = json.dumps({"data": {"ppk": PPK_V3.text}}, indent=2)
    cleaned, _ = redact(text)
    assert all(secret not in cleaned for secret in PPK_V3.secrets), cleaned
    assert PPK_V3.public_lines[0] in cleaned and f"Private-MAC: {MAC}" in cleaned


def test_the_last_lines_of_a_ppk_without_its_private_lines_header_lose_the_block_before_the_mac() -> None:
    """``tail -n 5 key.ppk``: four private lines then the MAC, no ``Private-Lines:`` header to find them by."""
    tail = "\n".join(PPK_V2.text.splitlines()[-5:]) + "\n"
    assert sanitize_output(tail.encode()).text == f"{BLOCK}\nPrivate-MAC: {MAC}\n"


def test_base64_lines_before_other_text_stay() -> None:
    """Only a MAC line makes the base64 lines right before it private: a public key's lines stay."""
    text = "Public-Lines: 2\n" + "\n".join(PPK_V3.public_lines) + "\nKey-Derivation: Argon2id\n"
    assert redact(text) == (text, 0)


# Ordinary log lines around the key: 40 of them (2.6 kB) are more than the 2000 bytes the cut test takes as the
# other side of the capture, so that side is all log lines, and the cut side has whole log lines before the key.
# (400 lines made each of the ~3,800 sanitize-and-search rounds ten times slower and covered no other cut.)
FILLER = "".join(f"2026-12-01T08:15:{i % 60:02d}Z INFO web-{i % 7} request served status=200 bytes={i}\n"
                 for i in range(40))
assert len(FILLER) > 2000


def _windows(key: PuttyKey) -> frozenset[str]:
    """Every 12 consecutive characters of a private line or of the MAC."""
    return frozenset(secret[i : i + 12] for secret in (*key.private_lines, key.mac) for i in range(len(secret) - 11))


def _shown_pieces(windows: frozenset[str], text: str) -> list[str]:
    """The key's 12-character ``windows`` found in ``text``: the text's own windows looked up in the key's (one pass
    over the text instead of one substring search per window of the key)."""
    return [text[i : i + 12] for i in range(len(text) - 11) if text[i : i + 12] in windows]


@pytest.mark.parametrize("key", [PPK_V2, PPK_V3_ENCRYPTED], ids=["v2-rsa", "v3-encrypted"])
def test_the_cap_never_shows_part_of_a_ppks_private_block_whichever_byte_it_cuts_at(key: PuttyKey) -> None:
    """The captured head ends at every byte of the key file, and the captured tail starts at every byte of it
    (as the runner's bounded capture cuts an output too long for the cap): no 12 characters of a private line
    or of the MAC are ever shown, as ``redact.py`` and ``cap.py`` treat a PEM block."""
    raw = (FILLER + key.text + FILLER).encode()
    start, end = len(FILLER), len(FILLER) + len(key.text)
    redactor, windows = build_redactor(), _windows(key)
    for cut in range(start, end + 1):
        head = Captured(head=raw[:cut], tail=raw[-2000:], total_bytes=len(raw))
        tail = Captured(head=raw[:2000], tail=raw[cut:], total_bytes=len(raw))
        for captured in (head, tail):
            result = sanitize_captured(captured, redactor, 65536)
            assert result.truncated and not _shown_pieces(windows, result.text), (cut, result.text)


@pytest.mark.parametrize(("text", "secret"), [
    (f"vault write auth/approle/login role_id={acl.CONSUL_ACCESSOR} secret_id={acl.APPROLE_SECRET}\n",
     acl.APPROLE_SECRET),
    (f"VAULT_ROLE_ID={acl.CONSUL_ACCESSOR}\nVAULT_SECRET_ID={acl.APPROLE_SECRET}\n", acl.APPROLE_SECRET),
    (f"export SECRET_ID={acl.APPROLE_SECRET}\n", acl.APPROLE_SECRET),
])
def test_a_secret_id_passed_as_an_argument_or_an_environment_variable_is_redacted(text: str, secret: str) -> None:
    assert redact(text) == (text.replace(secret, TOKEN), 1)


def test_an_approval_card_hides_the_secret_id_argument_and_keeps_the_role_id() -> None:
    argv = ["vault", "write", "auth/approle/login", f"role_id={acl.CONSUL_ACCESSOR}", f"secret_id={acl.APPROLE_SECRET}"]
    assert redact_argv(argv) == [*argv[:4], f"secret_id={TOKEN}"]


@pytest.mark.parametrize("line", [
    "vault write auth/approle/role/jenkins bind_secret_id=true secret_id_ttl=10m secret_id_num_uses=40",
    "DB_SECRET_ID=orders/prod/db-password",
    "gcloud: created version [3] of the secret [db-password-v2] secret_id=db-password-v2",
    "DB_SECRET_ID=arn:aws:secretsmanager:eu-west-1:123456789012:secret:orders-db-Xy12Ab",
])
def test_secret_id_arguments_that_hold_no_secret_stay(line: str) -> None:
    assert redact(line) == (line, 0)


@pytest.mark.parametrize("line", [
    "client.auth.approle.login(role_id=role_id, secret_id=secret_id)",
    "    resp = client.auth.approle.login(role_id=args.role_id, secret_id=args.secret_id)",
    "secret_id = os.environ['VAULT_SECRET_ID']",
    "secret_id = get_secret_id(role)",
    "    secret_id = lookup(\"approle\")",
    "wrapping_token = resp['wrap_info']['token']",
    "\tSecretID: tok.SecretID,",
    "    SecretID:    aclToken.SecretID,",
])
def test_source_code_that_passes_an_acl_secret_around_stays(line: str) -> None:
    """Code grep: an expression beside these names is code's (found by fuzzing against 7ba728e, where it stayed)."""
    assert redact(line + "\n") == (line + "\n", 0)


@pytest.mark.parametrize("line", [
    f"client.auth.approle.login(role_id=role_id, secret_id={acl.APPROLE_SECRET})",
    f"SecretID: {acl.CONSUL_SECRET},",
])
def test_a_uuid_passed_in_code_is_still_redacted(line: str) -> None:
    assert acl.APPROLE_SECRET not in redact(line)[0] and acl.CONSUL_SECRET not in redact(line)[0]


def test_a_ppk_in_a_yaml_block_loses_its_indented_private_lines() -> None:
    """A ConfigMap or a chart's values holding the key file as a block scalar: every line indented."""
    indented = "".join(f"    {line}\n" for line in PPK_V2.text.splitlines())
    text = f"data:\n  jenkins.ppk: |\n{indented}kind: ConfigMap\n"
    expected_key = "".join(f"    {line}\n" for line in PPK_V2.before_private.splitlines())
    expected = f"data:\n  jenkins.ppk: |\n{expected_key}    {BLOCK}\n    Private-MAC: {MAC}\nkind: ConfigMap\n"
    assert sanitize_output(text.encode()).text == expected
    tail = "".join(f"    {line}\n" for line in PPK_V2.text.splitlines()[-4:])
    assert redact(tail) == (f"    {BLOCK}\n    Private-MAC: {MAC}\n", 2)


def test_a_secret_id_argument_does_not_swallow_the_next_name_and_its_secret() -> None:
    """Found by fuzzing against 7ba728e: the argument's value ran over "=" into "password", whose value then
    matched no detector."""
    text = 'secret_id=secret_id=password = "e^6^m#j%6N$Pn%!P"\n'
    assert "e^6^m#j%6N$Pn%!P" not in redact(text)[0]

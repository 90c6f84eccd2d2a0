# ruff: noqa: E501  (output lines as tools print them; splitting them would hide their shape)
"""leaks7's leftovers, closed by leaks11: a Key Vault secret's value further than 2 KiB after its id (az prints up to
15 tags between them), the sovereign clouds' vault hosts (``vault.usgovcloudapi.net``, ``vault.microsoftazure.de``
beside ``vault.azure.cn``), a ``*_PW`` name outside an environment line (``DB_PW: x``, ``"SMTP_PW": "x"``), and code's
defaults for an unset variable naming a secret (Ruby's ``ENV["X"] || "lit"``, JavaScript's ``process.env.X || "lit"``
/ ``?? "lit"``), as grep or cat print code. Each secret is hidden, and the look-alikes beside it come out
byte-identical; the same texts through ``fisk-chatops exec``."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.sanitize import sanitize_output
from bot.sanitize.context_programs import KEY_VAULT_LOOKBACK
from tests.support.exec_printing import exec_printing

PW = "qAcRVmN1L2*B6e!"
VERSION = "3c1b0e9d8f7a4b2c9e1d0f6a5b4c3d2e"


def _key_vault(value: str, host: str = "vault.azure.net", tags: int = 0) -> str:
    """``az keyvault secret show``'s object; ``tags`` tags as long as Key Vault allows (512-character names,
    256-character values)."""
    pairs = ",\n".join(f'    "{"t" * 508}{i:04d}": "{"v" * 252}{i:04d}"' for i in range(tags))
    tag_block = "{\n" + pairs + "\n  }" if tags else "{}"
    return (f'{{\n  "attributes": {{\n    "enabled": true\n  }},\n  "contentType": null,\n'
            f'  "id": "https://kv-prod-weu.{host}/secrets/orders-db/{VERSION}",\n  "kid": null,\n'
            f'  "managed": null,\n  "name": "orders-db",\n  "tags": {tag_block},\n  "value": "{value}"\n}}\n')


SECRETS: dict[str, tuple[str, str]] = {
    "key vault, 15 tags of the longest (12 KiB between id and value)": (_key_vault(PW, tags=15), PW),
    "key vault, US Government cloud": (_key_vault(PW, "vault.usgovcloudapi.net"), PW),
    "key vault, Azure Germany": (_key_vault(PW, "vault.microsoftazure.de"), PW),
    "key vault, Azure China": (_key_vault(PW, "vault.azure.cn"), PW),
    "key vault, US Government cloud, long tags": (_key_vault(PW, "vault.usgovcloudapi.net", tags=15), PW),
    # a value longer than the patterns' bound (256) with an escaped quote past it: read to the string's real end
    "key vault, a long value with an escaped quote": (_key_vault("a" * 300 + '\\"' + "Zq9mW3xR7tY2" * 200),
                                                       "Zq9mW3xR7tY2"),
    "YAML DB_PW": (f"DB_PW: {PW}\n", PW),
    "YAML indented, quoted": (f'  smtp_pw: "{PW}"\n', PW),
    "YAML list item": (f"  - ADMIN_PW: {PW}\n", PW),
    "YAML value with ; and ,": ("DB_PW: ab;cd,Zq9mW3xR7tY2\n", "Zq9mW3xR7tY2"),
    "JSON SMTP_PW": (f'{{"SMTP_PW": "{PW}", "SMTP_HOST": "mail"}}\n', PW),
    "JSON indented": (f'{{\n  "db_pw": "{PW}",\n  "port": 5432\n}}\n', PW),
    "JSON escaped quote": ('{"SMTP_PW": "ab\\"Zq9mW3xR7tY2"}\n', "Zq9mW3xR7tY2"),
    "Python dict": (f"settings = {{'ldap_bind_pw': '{PW}'}}\n", PW),
    "Ruby ENV || (grep)": (f'config/database.rb:12:  password: ENV["DB_PASSWORD"] || "{PW}",\n', PW),
    "Ruby ENV || single quotes": (f"lib/mailer.rb:  token = ENV['SMTP_TOKEN'] || '{PW}'\n", PW),
    "Ruby ENV ||=": (f'ENV["SECRET_KEY_BASE"] ||= "{PW}"\n', PW),
    "Ruby ENV || a _PW name": (f'  pw = ENV["DB_PW"] || "{PW}"\n', PW),
    "JS process.env ||": (f"src/db.js:7:  password: process.env.DB_PASSWORD || '{PW}',\n", PW),
    "JS process.env ??": (f'src/auth.ts:const secret = process.env.JWT_SECRET ?? "{PW}";\n', PW),
    "JS process.env bracket": (f"const key = process.env['STRIPE_API_KEY'] || \"{PW}\";\n", PW),
    "JS template literal": (f"const t = process.env.GITHUB_TOKEN || `{PW}`;\n", PW),
}

LOOK_ALIKES = (
    # names whose "pw" is no password's, and values that are none
    "PW_POLICY: strict\nMAX_PW_LEN: 64\npw_history: 5\n",
    "DB_PW: ${DB_PW}\nDB_PW: changeme\nDB_PW: 3\nDB_PW:\n  from: vault\n",
    '{"PW_POLICY": "strict", "db_pw": "", "smtp_pw": null}\n',
    '{"db_pw": "<set in vault>"}\n',
    # defaults that are no secret: a port, an empty string, a placeholder, a name that is no secret's
    'port = ENV["PORT"] || "3000"\nhost = ENV["DB_HOST"] || "localhost"\n',
    'password = ENV["DB_PASSWORD"] || ""\npassword = ENV["DB_PASSWORD"] || "changeme"\n',
    "const port = process.env.PORT || '3000';\nconst host = process.env.DB_HOST ?? \"localhost\";\n",
    "const secret = process.env.JWT_SECRET || '';\nconst secret2 = process.env.JWT_SECRET;\n",
    "if (process.env.DEBUG || process.env.VERBOSE) { log('x') }\n",
    # Key Vault objects and ids that hold no secret's value
    '{\n  "id": "https://kv.vault.usgovcloudapi.net/secrets/orders-db",\n  "name": "orders-db"\n}\n',
    '{\n  "key": {"kid": "https://kv.vault.microsoftazure.de/keys/signing/' + VERSION + '"},\n  "value": "not-a-secret"\n}\n',
    '{"name": "retention", "value": "30 days", "url": "https://kv.vault.usgovcloudapi.net/"}\n',
)


@pytest.mark.parametrize("text,secret", SECRETS.values(), ids=list(SECRETS))
def test_the_secret_is_hidden(text: str, secret: str) -> None:
    shown = sanitize_output(text.encode()).text
    assert secret not in shown and "[REDACTED:" in shown, shown[-300:]


@pytest.mark.parametrize("text", LOOK_ALIKES, ids=range(len(LOOK_ALIKES)))
def test_the_look_alike_is_byte_identical(text: str) -> None:
    assert sanitize_output(text.encode()).text == text


def test_through_exec_every_secret_is_hidden_and_every_look_alike_whole(tmp_path: Path, fixtures_dir: Path) -> None:
    texts = [text for text, _ in SECRETS.values() if len(text) < 2000]
    output = str(exec_printing(tmp_path, fixtures_dir, "".join(texts + list(LOOK_ALIKES)).encode())["output"])
    assert [name for name, (text, secret) in SECRETS.items() if len(text) < 2000 and secret in output] == []
    assert [text for text in LOOK_ALIKES if text not in output] == []


def test_a_key_vault_value_beyond_the_reach_of_any_az_output_is_a_known_limit() -> None:
    """az prints at most 15 tags of at most 768 characters; a value further from its id than ``KEY_VAULT_LOOKBACK``
    is no az output's, and shows."""
    assert len(_key_vault(PW, tags=15)) < KEY_VAULT_LOOKBACK
    far = _key_vault(PW, tags=22)
    assert PW in sanitize_output(far.encode()).text


def test_values_under_many_ids_each_read_once() -> None:
    """Each value finds its own object's id, after ids of other clouds and values without one."""
    objects = [_key_vault(f"{PW}{i}", host) for i, host in enumerate(
        ["vault.azure.net", "vault.usgovcloudapi.net", "vault.azure.cn", "vault.usgovcloudapi.net"])]
    text = objects[0] + '{"value": "plain-1"}\n' + objects[1] + objects[2] + '{"value": "plain-2"}\n' + objects[3]
    shown = sanitize_output(text.encode()).text
    assert [i for i in range(4) if f"{PW}{i}" in shown] == [] and "plain-1" in shown and "plain-2" in shown

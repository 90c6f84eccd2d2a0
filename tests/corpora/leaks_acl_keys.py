"""Leak cases of the acceptance check of issue #11 that still leaked: ACL tokens whose secret is a UUID beside a
name ending in "ID" (Consul and Nomad ``SecretID``, Vault AppRole ``secret_id``, a wrapped response's
``wrapping_token:``), and a PuTTY ``.ppk`` key file's ``Private-Lines`` block and ``Private-MAC``.

Written as the tools print them (aligned columns, ``-format=json``/``-json``, Vault's ``-format=yaml``), with
fake values assembled at runtime so that secret scanners do not flag this file.
"""

from __future__ import annotations

import base64
import random
import struct
import uuid

from tests.corpora.leak_case import Leak


def fake_uuid(seed: int) -> str:
    return str(uuid.UUID(int=random.Random(seed).getrandbits(128), version=4))


# What each tool prints beside the secret: identifiers that must stay visible.
CONSUL_ACCESSOR, CONSUL_SECRET = fake_uuid(1), fake_uuid(2)
NOMAD_ACCESSOR, NOMAD_SECRET = fake_uuid(3), fake_uuid(4)
APPROLE_SECRET, APPROLE_ACCESSOR = fake_uuid(5), fake_uuid(6)
REQUEST_ID = fake_uuid(7)
# Vault's tokens before 1.10 ("s." and 24 characters): no "hvs." prefix to find them by.
LEGACY_TOKEN = "s." + "yzbznr9NlZNzsgEtz3SI56pX"
LEGACY_ACCESSOR = "Smi4CO0Sdhn8FJvL8XvOT30y"
TOKEN_ACCESSOR = "Tz4kW9cL2mXq7RbN1vY8sD3f"

CONSUL_TOKEN_READ = f"""AccessorID:       {CONSUL_ACCESSOR}
SecretID:         {CONSUL_SECRET}
Partition:        default
Namespace:        default
Description:      Bootstrap Token (Global Management)
Local:            false
Create Time:      2026-11-24 12:25:06.921933 +0000 UTC
Policies:
   00000000-0000-0000-0000-000000000001 - global-management
"""

CONSUL_TOKEN_READ_JSON = f"""{{
    "CreateIndex": 12,
    "ModifyIndex": 12,
    "AccessorID": "{CONSUL_ACCESSOR}",
    "SecretID": "{CONSUL_SECRET}",
    "Partition": "default",
    "Namespace": "default",
    "Description": "Bootstrap Token (Global Management)",
    "Policies": [
        {{
            "ID": "00000000-0000-0000-0000-000000000001",
            "Name": "global-management"
        }}
    ],
    "Local": false,
    "CreateTime": "2026-11-24T12:25:06.921933Z",
    "Hash": "oyrov6+GFLjo/KZAfqgxF/X4J/3LX0435DOBy9V22I0="
}}
"""

NOMAD_TOKEN_INFO = f"""Accessor ID  = {NOMAD_ACCESSOR}
Secret ID    = {NOMAD_SECRET}
Name         = Bootstrap Token
Type         = management
Global       = true
Create Time  = 2026-11-15 05:04:41.814954949 +0000 UTC
Expiry Time  = <none>
Create Index = 7
Modify Index = 7
Policies     = n/a
Roles        = n/a
"""

NOMAD_TOKEN_INFO_JSON = f"""{{
    "AccessorID": "{NOMAD_ACCESSOR}",
    "CreateIndex": 7,
    "CreateTime": "2026-11-15T05:04:41.814954949Z",
    "ExpirationTTL": 0,
    "ExpirationTime": null,
    "Global": true,
    "Hash": "VMJSqbRcM4dk0s8pX3u4wFQTuZpSGxP9vGRrMpfJDcs=",
    "ModifyIndex": 7,
    "Name": "Bootstrap Token",
    "Policies": null,
    "Roles": null,
    "SecretID": "{NOMAD_SECRET}",
    "Type": "management"
}}
"""

APPROLE_SECRET_ID = f"""Key                   Value
---                   -----
secret_id             {APPROLE_SECRET}
secret_id_accessor    {APPROLE_ACCESSOR}
secret_id_num_uses    0
secret_id_ttl         0s
"""

APPROLE_SECRET_ID_JSON = f"""{{
  "request_id": "{REQUEST_ID}",
  "lease_id": "",
  "lease_duration": 0,
  "renewable": false,
  "data": {{
    "secret_id": "{APPROLE_SECRET}",
    "secret_id_accessor": "{APPROLE_ACCESSOR}",
    "secret_id_num_uses": 0,
    "secret_id_ttl": 0
  }},
  "warnings": null
}}
"""

APPROLE_SECRET_ID_YAML = f"""data:
  secret_id: {APPROLE_SECRET}
  secret_id_accessor: {APPROLE_ACCESSOR}
  secret_id_num_uses: 0
  secret_id_ttl: 0
lease_duration: 0
lease_id: ""
renewable: false
request_id: {REQUEST_ID}
warnings: null
"""

# vault write -wrap-ttl=120s -f auth/approle/role/jenkins/secret-id: a wrapped response's keys end in ":"
APPROLE_WRAPPED = f"""Key                              Value
---                              -----
wrapping_token:                  {LEGACY_TOKEN}
wrapping_accessor:               {LEGACY_ACCESSOR}
wrapping_token_ttl:              2m
wrapping_token_creation_time:    2026-12-01 20:02:01.019838 +0000 UTC
wrapping_token_creation_path:    auth/approle/role/jenkins/secret-id
wrapped_accessor:                {APPROLE_ACCESSOR}
"""

VAULT_TOKEN_CREATE = f"""Key                  Value
---                  -----
token                {LEGACY_TOKEN}
token_accessor       {TOKEN_ACCESSOR}
token_duration       768h
token_renewable      true
token_policies       ["default"]
identity_policies    []
policies             ["default"]
"""

VAULT_LOGIN_JSON = f"""{{
  "request_id": "{REQUEST_ID}",
  "lease_id": "",
  "lease_duration": 0,
  "renewable": false,
  "data": null,
  "warnings": null,
  "auth": {{
    "client_token": "{LEGACY_TOKEN}",
    "accessor": "{TOKEN_ACCESSOR}",
    "policies": [
      "default"
    ],
    "token_policies": [
      "default"
    ],
    "metadata": {{
      "role_name": "jenkins"
    }},
    "lease_duration": 1200,
    "renewable": true,
    "entity_id": "{fake_uuid(8)}",
    "token_type": "service",
    "orphan": true
  }}
}}
"""

VAULT_WRAPPED_JSON = f"""{{
  "request_id": "",
  "lease_id": "",
  "lease_duration": 0,
  "renewable": false,
  "data": null,
  "warnings": null,
  "wrap_info": {{
    "token": "{LEGACY_TOKEN}",
    "accessor": "{LEGACY_ACCESSOR}",
    "ttl": 120,
    "creation_time": "2026-12-01T20:02:01.019838Z",
    "creation_path": "auth/approle/role/jenkins/secret-id",
    "wrapped_accessor": "{APPROLE_ACCESSOR}"
  }}
}}
"""


def _ssh_string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _lines(blob: bytes) -> list[str]:
    text = base64.b64encode(blob).decode()
    return [text[i : i + 64] for i in range(0, len(text), 64)]


class PuttyKey:
    """A PuTTY ``.ppk`` key file as PuTTYgen writes it: its public and private base64 lines and its MAC.

    ``version`` 2 (an RSA key, SHA-1 MAC) or 3 (Ed25519, SHA-256 MAC; ``encrypted`` adds the Argon2 parameters
    that PuTTYgen writes between the two blocks). Random bytes in the real layout, so the lengths, line counts
    and the first bytes of each blob are those of a real key."""

    def __init__(self, version: int = 2, encrypted: bool = False, seed: int = 11, newline: str = "\n") -> None:
        rng = random.Random(seed)
        if version == 2:
            algorithm, comment = "ssh-rsa", "rsa-key-20261201"
            modulus = b"\x00" + rng.randbytes(256)
            public = _ssh_string(algorithm.encode()) + _ssh_string(b"\x01\x00\x01") + _ssh_string(modulus)
            private = b"".join(_ssh_string(b"\x00" + rng.randbytes(n)) for n in (256, 128, 128, 128))
            mac = rng.randbytes(20).hex()
        else:
            algorithm, comment = "ssh-ed25519", "eddsa-key-20261201"
            public = _ssh_string(algorithm.encode()) + _ssh_string(rng.randbytes(32))
            private = _ssh_string(rng.randbytes(32)) + (rng.randbytes(12) if encrypted else b"")
            mac = rng.randbytes(32).hex()
        self.public_lines, self.private_lines, self.mac = _lines(public), _lines(private), mac
        self.salt = rng.randbytes(16).hex()
        head = [
            f"PuTTY-User-Key-File-{version}: {algorithm}",
            f"Encryption: {'aes256-cbc' if encrypted else 'none'}",
            f"Comment: {comment}",
            f"Public-Lines: {len(self.public_lines)}",
            *self.public_lines,
        ]
        kdf = ["Key-Derivation: Argon2id", "Argon2-Memory: 8192", "Argon2-Passes: 34", "Argon2-Parallelism: 1",
               f"Argon2-Salt: {self.salt}"] if encrypted else []
        self.before_private = newline.join([*head, *kdf, f"Private-Lines: {len(self.private_lines)}"]) + newline
        self.text = self.before_private + newline.join([*self.private_lines, f"Private-MAC: {mac}"]) + newline

    @property
    def secrets(self) -> tuple[str, ...]:
        """What must not survive: each private line (and its first 16 characters), the MAC (and its first 16)."""
        return (*self.private_lines, *(line[:16] for line in self.private_lines), self.mac, self.mac[:16])


PPK_V2, PPK_V3, PPK_V3_ENCRYPTED = PuttyKey(2), PuttyKey(3, seed=12), PuttyKey(3, encrypted=True, seed=13)

ACL_KEY_LEAKS: tuple[Leak, ...] = (
    Leak("consul_acl_token_read", CONSUL_TOKEN_READ, (CONSUL_SECRET,)),
    Leak("consul_acl_token_read_json", CONSUL_TOKEN_READ_JSON, (CONSUL_SECRET,)),
    Leak("nomad_acl_token_info", NOMAD_TOKEN_INFO, (NOMAD_SECRET,)),
    Leak("nomad_acl_token_info_json", NOMAD_TOKEN_INFO_JSON, (NOMAD_SECRET,)),
    Leak("vault_approle_secret_id", APPROLE_SECRET_ID, (APPROLE_SECRET,)),
    Leak("vault_approle_secret_id_json", APPROLE_SECRET_ID_JSON, (APPROLE_SECRET,)),
    Leak("vault_approle_secret_id_yaml", APPROLE_SECRET_ID_YAML, (APPROLE_SECRET,)),
    Leak("vault_approle_wrapped", APPROLE_WRAPPED, (LEGACY_TOKEN, LEGACY_TOKEN[2:])),
    Leak("vault_token_create_legacy", VAULT_TOKEN_CREATE, (LEGACY_TOKEN, LEGACY_TOKEN[2:])),
    Leak("vault_login_json_legacy", VAULT_LOGIN_JSON, (LEGACY_TOKEN, LEGACY_TOKEN[2:])),
    Leak("vault_wrap_info_json_legacy", VAULT_WRAPPED_JSON, (LEGACY_TOKEN, LEGACY_TOKEN[2:])),
    Leak("vault_approle_login_argument", f"$ vault write auth/approle/login role_id={REQUEST_ID} "
         f"secret_id={APPROLE_SECRET}\n", (APPROLE_SECRET,)),
    Leak("vault_secret_id_env", f"VAULT_ROLE_ID={REQUEST_ID}\nVAULT_SECRET_ID={APPROLE_SECRET}\n", (APPROLE_SECRET,)),
    Leak("putty_ppk_v2_rsa", PPK_V2.text, PPK_V2.secrets),
    Leak("putty_ppk_v3_ed25519", PPK_V3.text, PPK_V3.secrets),
    Leak("putty_ppk_v3_encrypted", PPK_V3_ENCRYPTED.text, PPK_V3_ENCRYPTED.secrets),
    Leak("putty_ppk_helm_values", "sftp:\n  host: files.example.com\n  deployKey: |\n"
         + "".join(f"    {line}\n" for line in PPK_V3.text.splitlines()) + "  port: 22\n", PPK_V3.secrets),
)

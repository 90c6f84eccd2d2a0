"""leaks11's families (issue #11): Key Vault values under the sovereign clouds' ids and 15 long tags, ``*_PW`` keys
outside environment lines, code's defaults for an unset secret variable (Ruby, JavaScript). The cap's edges are
tested through the capture in ``tests/test_sanitize_cut_context.py`` (a corpus text is never capped)."""

from __future__ import annotations

from tests.corpora.leak_case import Leak

_VERSION = "41f0c2e9a7b35d86e1c04f2a9b7d3e65"


def _key_vault(host: str, value: str, tags: str = "{}") -> str:
    return (f'{{\n  "attributes": {{\n    "enabled": true\n  }},\n  "contentType": null,\n'
            f'  "id": "https://kv-ops.{host}/secrets/billing-api/{_VERSION}",\n  "kid": null,\n  "managed": null,\n'
            f'  "name": "billing-api",\n  "tags": {tags},\n  "value": "{value}"\n}}\n')


_LONG_TAGS = "{\n" + ",\n".join(f'    "{"owner-" * 80}{i}": "{"team-" * 50}{i}"' for i in range(15)) + "\n  }"

LEAKS11_LEAKS: tuple[Leak, ...] = (
    Leak("key_vault_us_government", _key_vault("vault.usgovcloudapi.net", "Hv4&mQ9zLp2#Tx7w"), ("Hv4&mQ9zLp2#Tx7w",)),
    Leak("key_vault_germany", _key_vault("vault.microsoftazure.de", "Rk8%nB3vXc6!Qs1e"), ("Rk8%nB3vXc6!Qs1e",)),
    Leak("key_vault_fifteen_long_tags", _key_vault("vault.azure.net", "Pz5^wE2rTy9@Ui4o", _LONG_TAGS),
         ("Pz5^wE2rTy9@Ui4o",)),
    Leak("yaml_pw_keys", "app:\n  DB_PW: Gq7!hN2kMz9x\nmailers:\n  - smtp_pw: \"Lw4$pR8tVb1c\"\n",
         ("Gq7!hN2kMz9x", "Lw4$pR8tVb1c")),
    Leak("json_pw_keys", '{"SMTP_HOST": "mail.internal", "SMTP_PW": "Ye3*uI6oPa0s", "LDAP_BIND_PW": "Df5&gH8jKl2z"}\n',
         ("Ye3*uI6oPa0s", "Df5&gH8jKl2z")),
    Leak("ruby_env_default", 'config/initializers/stripe.rb:3:Stripe.api_key = ENV["STRIPE_SECRET_KEY"] || '
         '"Xc9vBn2mQw7eRt4y"\nconfig/database.rb:  password: ENV[\'DB_PASSWORD\'] || \'Ui8oPa1sDf3g\'\n',
         ("Xc9vBn2mQw7eRt4y", "Ui8oPa1sDf3g")),
    Leak("js_env_default", "src/config.js:12:  jwtSecret: process.env.JWT_SECRET || 'Hj6kLz0xCv5b',\n"
         'src/db.ts:4:const password = process.env["PGPASSWORD"] ?? "Nm2qWe8rTy1u";\n',
         ("Hj6kLz0xCv5b", "Nm2qWe8rTy1u")),
)

"""Whether a Terraform state's ``"result"`` is a ``random_password``'s: the random provider keeps the password it
generated in that attribute (marked sensitive, yet ``terraform state pull`` and ``terraform show -json`` print it),
while ``"result"`` is an ordinary word of every other JSON log. The resource's ``"type"`` stands before its
attributes (``"type": "random_password"``, then name, provider, instances, attributes), and no other ``"type"`` key
between them: a random_password's attributes have none. So a result is the password's when the last ``"type"`` key
before it, at most ``RANDOM_LOOKBACK`` bytes back, says ``random_password``.
"""

from __future__ import annotations

import re

# The longest stretch from a resource's "type" to its "result": name, provider, mode, index_key, schema_version and
# the attributes sorted before "result" (bcrypt_hash, id, keepers, length, lower, min_*, number, numeric,
# override_special), with room for a few keepers.
RANDOM_LOOKBACK = 4096
_TYPE_KEY = re.compile(rb'"type"[ \t]{0,4}:[ \t]{0,4}"([A-Za-z0-9_]{1,64})"')
# The last search (text, where it stopped, the last "type" key found before there, -1 none): a text's candidates come
# in order, so the next result searches only the bytes after the last one's, and each byte is read once per text.
_LAST: list[tuple[bytes, int, int]] = [(b"", 0, -1)]


def random_password_result(text: bytes, start: int) -> bool:
    """Whether the ``"result"`` key at ``start`` is a ``random_password`` resource's (see the module's docstring)."""
    last_text, searched, type_at = _LAST[0]
    if last_text is not text or searched > start:
        searched, type_at = max(0, start - RANDOM_LOOKBACK), -1
    found = text.rfind(b'"type"', searched, start)
    if found >= 0:
        type_at = found
    _LAST[0] = (text, start, type_at)
    if type_at < 0 or start - type_at > RANDOM_LOOKBACK:
        return False
    key = _TYPE_KEY.match(text, type_at)
    return key is not None and key.group(1) == b"random_password"

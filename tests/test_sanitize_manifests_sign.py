"""The uncut text's quick test for a Secret object (``structured._SECRET_SIGN``): every way a manifest says it is
a Secret still has its data redacted; text that only mentions the word is left to the other detectors."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.sanitize import sanitize_output
from bot.sanitize.structured import redact_secret_manifests

VALUE = "c3VwZXItc2VjcmV0LXZhbHVl"  # base64, no shape any other detector knows


def _marker(kind: str, secret: bytes) -> bytes:
    return f"[REDACTED:{kind}]".encode()


@pytest.mark.parametrize(
    "manifest",
    [
        f"apiVersion: v1\ndata:\n  db: {VALUE}\nkind: Secret\n",
        f"apiVersion: v1\ndata:\n  db: {VALUE}\nkind:   'Secret'  # generated\n",
        f"- apiVersion: v1\n  data:\n    db: {VALUE}\n  kind:\tSecret\n",
        f'{{\n  "apiVersion": "v1",\n  "data": {{\n    "db": "{VALUE}"\n  }},\n  "kind" :  "Secret"\n}}\n',
        f'{{"apiVersion":"v1","data":{{"db":"{VALUE}"}},"kind":"Secret"}}\n',
    ],
)
def test_every_way_of_saying_secret_still_redacts_the_data(manifest: str) -> None:
    out, count = redact_secret_manifests(manifest.encode(), _marker)
    assert count == 1 and VALUE.encode() not in out
    assert VALUE not in sanitize_output(manifest.encode(), output_limit=1 << 30).text


def test_text_that_only_mentions_secret_is_not_read_as_a_manifest() -> None:
    text = (f'src/api/x.py:4:    secret = request.headers.get("X-Api-Secret")\nkind: ConfigMap\ndata:\n'
            f"  db: {VALUE}\nSecretName: x\n").encode()
    assert redact_secret_manifests(text, _marker) == (text, 0)


def test_the_literal_check_before_the_secret_sign_search_says_what_the_search_says() -> None:
    """``_secret_signed`` looks for the literals the sign's alternatives start with before searching (grep output
    says "-Secret" on every line, and ``re`` tried both alternatives at every byte): same answer always."""
    from bot.sanitize.structured import _SECRET_SIGN, _secret_signed

    texts = [b'kind: Secret', b'"kind": "Secret"', b'x "Secret" y', b"kind:\n  Secret", b"kinds: Secrets", b"Secret",
             b"X-Fmfceo-Secret", b"kind", b"", b'"Secret', b"KIND: Secret", b"kind\t:\t'Secret'"]
    # "kind" where the sign is not, before and after where it is (each "kind" is matched where it stands)
    texts += [b"kindkind: Secret", b"xkind: ConfigMap\nkinder: 1\nkind: Secret", b"kind kind\"  :  \"Secret",
              b"a_kind = 1\n" * 50 + b'kind"\t:\n "Secret', b"kind: Secre", b"kind:" + b" " * 9 + b"Secret"]
    texts += [path.read_bytes() for path in sorted((Path(__file__).parent / "corpora" / "benign").glob("*.txt"))]
    for text in texts:
        assert _secret_signed(text) is (_SECRET_SIGN.search(text) is not None), text[:60]

"""Deterministic secret values of the right shape for the accept5 corpora.

A template writes ``{{kind}}`` for a secret (recorded, must not survive), ``{{kind#label}}`` to use the same
secret again, and ``{{~kind}}`` for a random value that is not secret (ids, digests). Every value comes from a
``random.Random`` seeded with the case's name, so a case renders the same bytes on every run."""

from __future__ import annotations

import base64
import json
import random
import re
import string
from collections.abc import Callable
from dataclasses import dataclass

B62 = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits
PW_SYMBOLS = "!#%^*_-+=.~"
URL_SAFE = B62 + "-_.~"
B64 = B62 + "+/"


def _chars(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def password(rng: random.Random, n: int = 18, symbols: str = PW_SYMBOLS) -> str:
    """A generated password: letters, digits and a few symbols, at least one of each kind."""
    while True:
        value = _chars(rng, B62 + symbols * 2, n)
        if (any(c.isdigit() for c in value) and any(c.islower() for c in value)
                and any(c.isupper() for c in value) and any(c in symbols for c in value)
                and value[0] in B62):
            return value


def _b64_of_bytes(rng: random.Random, n: int) -> str:
    return base64.b64encode(bytes(rng.getrandbits(8) for _ in range(n))).decode()


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def jwt(rng: random.Random) -> str:
    header = _b64url(json.dumps({"alg": "RS256", "typ": "JWT", "kid": _chars(rng, HEX, 16)}).encode())
    claims = {"iss": "https://auth.internal.example.net/", "sub": f"svc-{_chars(rng, HEX, 8)}",
              "aud": "api", "iat": 1764660000 + rng.randrange(10000), "exp": 1764663600 + rng.randrange(10000),
              "scope": "read:deploys write:deploys"}
    payload = _b64url(json.dumps(claims, separators=(",", ":")).encode())
    signature = _b64url(bytes(rng.getrandbits(8) for _ in range(256)))
    return f"{header}.{payload}.{signature}"


def pem(rng: random.Random, label: str, body_bytes: int = 1190) -> str:
    body = base64.b64encode(bytes(rng.getrandbits(8) for _ in range(body_bytes))).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"


def openssh_key(rng: random.Random) -> str:
    body = base64.b64encode(b"openssh-key-v1\x00" + bytes(rng.getrandbits(8) for _ in range(380))).decode()
    lines = [body[i:i + 70] for i in range(0, len(body), 70)]
    return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END OPENSSH PRIVATE KEY-----"


def pgp_key(rng: random.Random) -> str:
    body = base64.b64encode(bytes(rng.getrandbits(8) for _ in range(900))).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    checksum = "=" + base64.b64encode(bytes(rng.getrandbits(8) for _ in range(3))).decode()
    return ("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + "\n".join(lines) + "\n" + checksum
            + "\n-----END PGP PRIVATE KEY BLOCK-----")


def _k8s_b64(rng: random.Random) -> str:
    return base64.b64encode(password(rng, 20).encode()).decode()


GENERATORS: dict[str, Callable[[random.Random], str]] = {
    "pw": lambda r: password(r, 18),
    "pw12": lambda r: password(r, 12),
    "pw24": lambda r: password(r, 24),
    "upw": lambda r: password(r, 20, "-_.~"),
    "apw": lambda r: _chars(r, B62, 22),
    "hex32": lambda r: _chars(r, HEX, 32),
    "hex40": lambda r: _chars(r, HEX, 40),
    "hex64": lambda r: _chars(r, HEX, 64),
    "b62_32": lambda r: _chars(r, B62, 32),
    "b62_40": lambda r: _chars(r, B62, 40),
    "b64_32": lambda r: _b64_of_bytes(r, 32),
    "b64_64": lambda r: _b64_of_bytes(r, 64),
    "k8s": _k8s_b64,
    "akia": lambda r: "AKIA" + _chars(r, UPPER_DIGITS, 16),
    "asia": lambda r: "ASIA" + _chars(r, UPPER_DIGITS, 16),
    "awssecret": lambda r: _chars(r, B64, 40),
    "awssession": lambda r: "IQoJb3JpZ2luX2VjE" + _chars(r, B64, 380),
    "ghp": lambda r: "ghp_" + _chars(r, B62, 36),
    "gho": lambda r: "gho_" + _chars(r, B62, 36),
    "ghs": lambda r: "ghs_" + _chars(r, B62, 36),
    "ghpat": lambda r: "github_pat_11" + _chars(r, UPPER_DIGITS, 20) + "_" + _chars(r, B62, 59),
    "glpat": lambda r: "glpat-" + _chars(r, B62 + "-_", 20),
    "glrt": lambda r: "glrt-" + _chars(r, B62 + "-_", 20),
    "xoxb": lambda r: f"xoxb-{r.randrange(10**11, 10**12)}-{r.randrange(10**12, 10**13)}-{_chars(r, B62, 24)}",
    "xoxp": lambda r: (f"xoxp-{r.randrange(10**11, 10**12)}-{r.randrange(10**11, 10**12)}-"
                       f"{r.randrange(10**12, 10**13)}-{_chars(r, HEX, 32)}"),
    "xapp": lambda r: f"xapp-1-A{_chars(r, UPPER_DIGITS, 10)}-{r.randrange(10**12, 10**13)}-{_chars(r, HEX, 64)}",
    "slackhook": lambda r: (f"https://hooks.slack.com/services/T{_chars(r, UPPER_DIGITS, 8)}/"
                            f"B{_chars(r, UPPER_DIGITS, 10)}/{_chars(r, B62, 24)}"),
    "sklive": lambda r: "sk_live_51" + _chars(r, B62, 97),
    "rklive": lambda r: "rk_live_51" + _chars(r, B62, 97),
    "whsec": lambda r: "whsec_" + _chars(r, B62, 32),
    "twsk": lambda r: "SK" + _chars(r, HEX, 32),
    "sg": lambda r: "SG." + _chars(r, B62 + "-_", 22) + "." + _chars(r, B62 + "-_", 43),
    "pdkey": lambda r: _chars(r, B62 + "_-+", 20),
    "npm": lambda r: "npm_" + _chars(r, B62, 36),
    "pypi": lambda r: "pypi-AgEIcHlwaS5vcmc" + _chars(r, B62 + "-_", 150),
    "shpat": lambda r: "shpat_" + _chars(r, HEX, 32),
    "shpss": lambda r: "shpss_" + _chars(r, HEX, 32),
    "openai": lambda r: "sk-proj-" + _chars(r, B62 + "-_", 156),
    "anthropic": lambda r: "sk-ant-api03-" + _chars(r, B62 + "-_", 93) + "AA",
    "jwt": jwt,
    "hvs": lambda r: "hvs." + _chars(r, B62 + "_-", 90),
    "hvb": lambda r: "hvb." + _chars(r, B62 + "_-", 130),
    "doppler": lambda r: "dp.st.prd." + _chars(r, B62, 40),
    "gcpapikey": lambda r: "AIza" + _chars(r, B62 + "-_", 35),
    "azkey": lambda r: _b64_of_bytes(r, 64),
    "sassig": lambda r: _b64_of_bytes(r, 32).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D"),
    "linode": lambda r: _chars(r, HEX, 64),
    "dop": lambda r: "dop_v1_" + _chars(r, HEX, 64),
    "bwsession": lambda r: _b64_of_bytes(r, 64),
    "opsvc": lambda r: "ops_eyJ" + _chars(r, B62, 600),
    "infisical": lambda r: f"st.{_chars(r, HEX, 24)}.{_chars(r, HEX, 32)}.{_chars(r, HEX, 32)}",
    "mailgun": lambda r: "key-" + _chars(r, HEX, 32),
    "nrak": lambda r: "NRAK-" + _chars(r, UPPER_DIGITS, 27),
    "sentrydsn": lambda r: (f"https://{_chars(r, HEX, 32)}@o{r.randrange(100000, 999999)}.ingest.sentry.io/"
                            f"{r.randrange(1000000, 9999999)}"),
    "rsa": lambda r: pem(r, "RSA PRIVATE KEY"),
    "ec": lambda r: pem(r, "EC PRIVATE KEY", 121),
    "rsaesc": lambda r: pem(r, "RSA PRIVATE KEY").replace("\n", "\\n") + "\\n",
    "pkcs8esc": lambda r: pem(r, "PRIVATE KEY", 1218).replace("\n", "\\n") + "\\n",
    "pkcs8": lambda r: pem(r, "PRIVATE KEY", 1218),
    "encpkcs8": lambda r: pem(r, "ENCRYPTED PRIVATE KEY", 1298),
    "openssh": openssh_key,
    "pgp": pgp_key,
    "age": lambda r: "AGE-SECRET-KEY-1" + _chars(r, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
    "terraformtoken": lambda r: _chars(r, B62, 14) + ".atlasv1." + _chars(r, B62, 67),
    # not secret (written {{~kind}}): fillers that look like secrets but are not
    "uuid": lambda r: "-".join(_chars(r, HEX, n) for n in (8, 4, 4, 4, 12)),
    "sha256": lambda r: _chars(r, HEX, 64),
    "sha1": lambda r: _chars(r, HEX, 40),
    "id8": lambda r: _chars(r, HEX, 8),
    "id12": lambda r: _chars(r, HEX, 12),
    "id17": lambda r: _chars(r, HEX, 17),
    "num6": lambda r: str(r.randrange(100000, 999999)),
    "num12": lambda r: str(r.randrange(10**11, 10**12)),
}

PLACEHOLDER = re.compile(r"\{\{(~?)([a-z0-9_]+)(?:#([a-z0-9_]+))?\}\}")
WINDOW = 16  # a run this long of a secret found in the output counts as the secret surviving (partly)


@dataclass(frozen=True)
class Secret:
    kind: str
    value: str

    def pieces(self) -> list[str]:
        """What must not appear: the value, or for a key block each of its body lines."""
        if "-----BEGIN" in self.value:
            lines = self.value.replace("\\n", "\n").splitlines()
            return [line for line in lines if len(line) >= 24 and "-----" not in line]
        return [self.value]

    def survives_in(self, output: str) -> str | None:
        """``"whole"`` or ``"partly"`` when this secret (or a 16-character run of it) is in ``output``."""
        pieces = self.pieces()
        if any(p in output for p in pieces):
            return "whole" if all(p in output for p in pieces) else "partly"
        for piece in pieces:
            if len(piece) > WINDOW and any(piece[i:i + WINDOW] in output for i in range(len(piece) - WINDOW + 1)):
                return "partly"
        return None


@dataclass(frozen=True)
class LeakCase:
    name: str
    family: str
    text: str
    secrets: tuple[Secret, ...]


def render(name: str, family: str, template: str) -> LeakCase:
    """The case's text with every placeholder filled (seeded by ``name``) and the secrets it holds."""
    rng = random.Random(f"accept5:{name}")
    labelled: dict[str, str] = {}
    secrets: list[Secret] = []

    def fill(match: re.Match[str]) -> str:
        filler, kind, label = match.group(1), match.group(2), match.group(3)
        if kind not in GENERATORS:  # a Go template's own {{end}} in the text
            return match.group(0)
        if label and (kind, label) in labelled_keys:
            return labelled[f"{kind}#{label}"]
        value = GENERATORS[kind](rng)
        if label:
            labelled[f"{kind}#{label}"] = value
            labelled_keys.add((kind, label))
        if not filler:
            secrets.append(Secret(kind, value))
        return value

    labelled_keys: set[tuple[str, str]] = set()
    text = PLACEHOLDER.sub(fill, template)
    assert secrets, f"{name}: a leak case without a secret"
    return LeakCase(name, family, text, tuple(secrets))

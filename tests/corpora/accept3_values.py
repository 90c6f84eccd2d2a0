"""Random secret values for the third acceptance check's corpora (issue #11): every value is drawn from a seeded
generator, so no case reuses a well-known example value and a rerun prints the same bytes."""

from __future__ import annotations

import base64
import random
import string
import uuid

SEED = 0xACCE973
_R = random.Random(SEED)


def reseed(seed: int = SEED) -> None:
    """Start the values over: each corpus module calls it first, so its values do not depend on which corpus
    was imported before it."""
    _R.seed(seed)

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
# symbols a password generator uses that survive YAML, JSON, shells and URLs unquoted in most tools' output
PW_SYMBOLS = "!#%^*-_+=.~"


def pick(alphabet: str, n: int) -> str:
    return "".join(_R.choice(alphabet) for _ in range(n))


def alnum(n: int) -> str:
    return pick(ALNUM, n)


def lower_alnum(n: int) -> str:
    return pick(string.ascii_lowercase + string.digits, n)


def upper_alnum(n: int) -> str:
    return pick(string.ascii_uppercase + string.digits, n)


def hexs(n: int) -> str:
    return pick(HEX, n)


def raw(n: int) -> bytes:
    return bytes(_R.getrandbits(8) for _ in range(n))


def b64(n_bytes: int) -> str:
    return base64.b64encode(raw(n_bytes)).decode()


def b64url(n_bytes: int) -> str:
    return base64.urlsafe_b64encode(raw(n_bytes)).decode().rstrip("=")


def uuid4() -> str:
    return str(uuid.UUID(bytes=raw(16), version=4))


def password(n: int = 20, symbols: str = PW_SYMBOLS) -> str:
    """A generated password: at least one of each class, shuffled."""
    chars = [_R.choice(string.ascii_lowercase), _R.choice(string.ascii_uppercase), _R.choice(string.digits),
             _R.choice(symbols)] + [_R.choice(ALNUM + symbols) for _ in range(n - 4)]
    _R.shuffle(chars)
    return "".join(chars)


_WORDS = ("Kestrel", "Harbor", "Juniper", "Falcon", "Cobalt", "Meadow", "Orchid", "Tundra", "Quartz", "Saffron",
          "Walnut", "Ember", "Lantern", "Pebble", "Thistle", "Granite", "Willow", "Comet", "Maple", "Drift")


def human_password() -> str:
    """What people pick: a word, a year or digits, a symbol (Kestrel2024!)."""
    return f"{_R.choice(_WORDS)}{_R.choice(_WORDS).lower()}{_R.randint(10, 9999)}{_R.choice('!#$%*?')}"


def b64_of(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def jwt(claims: str) -> tuple[str, str]:
    """A JWT with an HS256 header; (token, the part after the header: payload and signature)."""
    header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    payload = base64.urlsafe_b64encode(claims.encode()).decode().rstrip("=")
    tail = f"{payload}.{b64url(32)}"
    return f"{header}.{tail}", tail


def pem_body(n_bytes: int) -> str:
    data = b64(n_bytes)
    return "\n".join(data[i:i + 64] for i in range(0, len(data), 64))

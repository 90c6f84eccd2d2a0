"""What a leak case is, and secret values of realistic shapes drawn from a generator seeded per case, so the
corpora are the same on every run and no value is shared between cases (a value found twice would hide which
case leaked it)."""

from __future__ import annotations

import base64
import hashlib
import random
import string
from dataclasses import dataclass, field

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
SYMBOLS = "!#%^*-_+=.~@"
WORDS = ("Winter", "Falcon", "Harbor", "Cobalt", "Summer", "Orchid", "Granite", "Velvet", "Maple", "Quartz",
         "Tundra", "Copper", "Saffron", "Ember", "Nimbus", "Walrus", "Juniper", "Lantern")


@dataclass(frozen=True)
class Secret:
    """One secret a case prints; ``survives_in`` says whether the output shows it whole or a telling part."""

    kind: str
    value: str

    def fragments(self) -> list[str]:
        """Pieces that would give the secret away: each line of a multi-line value, else windows of 12 chars
        (a value cut at a delimiter and half shown is still a leak)."""
        lines = [ln.strip() for ln in self.value.splitlines() if len(ln.strip()) >= 16]
        if len(lines) > 1:
            return lines
        value = self.value
        if len(value) < 14:
            return []
        width = 12
        return [value[i:i + width] for i in range(len(value) - width + 1)]

    def survives_in(self, output: str) -> str:
        if self.value in output:
            return "whole"
        if any(piece in output for piece in self.fragments()):
            return "partly"
        return ""


@dataclass(frozen=True)
class LeakCase:
    name: str
    family: str
    text: str
    secrets: tuple[Secret, ...]


@dataclass
class Family:
    """Cases of one family, each drawn from ``random.Random(f"accept6:{name}")``."""

    family: str
    cases: dict[str, LeakCase] = field(default_factory=dict)

    def rng(self, name: str) -> random.Random:
        return random.Random(f"accept6:{self.family}:{name}")

    def add(self, name: str, text: str, *secrets: Secret) -> None:
        assert name not in self.cases, name
        assert secrets, name
        for s in secrets:
            assert s.value in text or all(ln.strip() in text for ln in s.value.splitlines()), (name, s.kind)
        self.cases[name] = LeakCase(name, self.family, text if text.endswith("\n") else text + "\n", secrets)


def pick(rs: random.Random, alphabet: str, n: int) -> str:
    return "".join(rs.choice(alphabet) for _ in range(n))


def password(rs: random.Random, n: int = 18, symbols: str = SYMBOLS) -> str:
    """A generated password: letters, digits and a few symbols, never starting with a symbol."""
    body = [rs.choice(ALNUM) for _ in range(n)]
    for i in rs.sample(range(1, n), k=max(2, n // 6)):
        body[i] = rs.choice(symbols)
    for i, alphabet in zip(rs.sample(range(1, n), k=2), (string.digits, string.ascii_uppercase), strict=True):
        if body[i] not in symbols:
            body[i] = rs.choice(alphabet)
    return "".join(body)


def human_password(rs: random.Random) -> str:
    """What people pick: two words, digits and a symbol (``Harbor!Maple2291``)."""
    return f"{rs.choice(WORDS)}{rs.choice('!#.-@')}{rs.choice(WORDS)}{rs.randint(10, 9999)}"


def hexs(rs: random.Random, n: int) -> str:
    return pick(rs, HEX, n)


def b64(rs: random.Random, nbytes: int) -> str:
    return base64.b64encode(rs.randbytes(nbytes)).decode()


def b64url(rs: random.Random, nbytes: int) -> str:
    return base64.urlsafe_b64encode(rs.randbytes(nbytes)).decode().rstrip("=")


def uuid(rs: random.Random) -> str:
    h = hexs(rs, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rs.choice('89ab')}{h[17:20]}-{h[20:]}"


def aws_key_id(rs: random.Random, prefix: str = "AKIA") -> str:
    return prefix + pick(rs, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)


def aws_secret(rs: random.Random) -> str:
    return pick(rs, ALNUM + "+/", 40)


def aws_session_token(rs: random.Random) -> str:
    return "IQoJb3JpZ2luX2VjE" + pick(rs, ALNUM + "+/", 340) + "=="


def jwt(rs: random.Random, claims: str | None = None) -> tuple[str, str]:
    """(token, the part that must not survive): the header is the same in every HS256 token, so only the
    payload and signature are the secret."""
    header = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6I" + pick(rs, ALNUM, 20)
    default = (f'{{"sub":"svc-{hexs(rs, 6)}","iat":{rs.randint(1700000000, 1760000000)},'
               f'"exp":{rs.randint(1760000000, 1790000000)},"jti":"{uuid(rs)}"}}')
    payload = base64.urlsafe_b64encode((claims or default).encode()).decode().rstrip("=")
    sig = b64url(rs, 64)
    return f"{header}.{payload}.{sig}", f"{payload}.{sig}"


def pem(rs: random.Random, label: str, nbytes: int = 600) -> tuple[str, str]:
    """(the whole PEM block, its body): the body is what must not survive."""
    raw = base64.b64encode(rs.randbytes(nbytes)).decode()
    lines = [raw[i:i + 64] for i in range(0, len(raw), 64)]
    body = "\n".join(lines)
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----", body


def openssh_key(rs: random.Random) -> tuple[str, str]:
    raw = base64.b64encode(b"openssh-key-v1\x00" + rs.randbytes(380)).decode()
    lines = [raw[i:i + 70] for i in range(0, len(raw), 70)]
    body = "\n".join(lines[1:])  # the first line is the same magic in every key
    return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END OPENSSH PRIVATE KEY-----", body


def digest(rs: random.Random) -> str:
    return hashlib.sha256(rs.randbytes(16)).hexdigest()


def ip(rs: random.Random) -> str:
    return f"10.{rs.randint(0, 255)}.{rs.randint(0, 255)}.{rs.randint(2, 254)}"


def ts(rs: random.Random) -> str:
    return f"2026-12-02T{rs.randint(0, 23):02}:{rs.randint(0, 59):02}:{rs.randint(0, 59):02}.{rs.randint(0, 999):03}Z"

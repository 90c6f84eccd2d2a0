"""NATS nkey seeds as ``nsc`` and the nkeys libraries write them, built here from seeded bytes so a corpus holds
valid seeds (their CRC right) without a real credential: base32 (RFC 4648, no padding) of two prefix bytes (``S``
and the key's type), the 32-byte raw seed and a CRC-16/XMODEM of those 34 bytes, little-endian; 58 characters."""

from __future__ import annotations

import base64
import random

# The type's prefix byte (nkeys' PrefixByte*): what the seed's second character says it is.
TYPES = {"user": 20 << 3, "account": 0, "operator": 14 << 3, "server": 13 << 3, "cluster": 2 << 3}
_SEED = 18 << 3  # PrefixByteSeed: every seed's first character is "S"


def crc16(data: bytes) -> int:
    """CRC-16/XMODEM (polynomial 0x1021, initial 0), as nkeys checks its keys."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def seed(kind: str, rng: random.Random) -> str:
    """A seed of ``kind`` (``TYPES``) from 32 bytes of ``rng``."""
    prefix = TYPES[kind]
    raw = bytes([_SEED | prefix >> 5, (prefix & 31) << 3]) + rng.randbytes(32)
    return base64.b32encode(raw + crc16(raw).to_bytes(2, "little")).decode().rstrip("=")


def public_key(kind: str, rng: random.Random) -> str:
    """A public key of ``kind`` (56 characters: ``U...``, ``A...``), no secret."""
    raw = bytes([TYPES[kind] if kind != "account" else 0]) + rng.randbytes(32)
    return base64.b32encode(raw + crc16(raw).to_bytes(2, "little")).decode().rstrip("=")

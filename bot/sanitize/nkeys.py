"""NATS nkey seeds: what makes a 58-character word of capitals and digits one (issue #11, a seed printed without
its ``.creds`` armour: ``nsc generate nkey``, a ``.nk`` file, ``NATS_SEED=``).

A seed is base32 (RFC 4648, no padding) of 36 bytes: the seed prefix and the key's type packed in two bytes, the
32-byte raw seed, then a CRC-16/XMODEM of those 34 bytes, little-endian (nkeys' ``EncodeSeed``). So its first
characters say ``S`` and the type (``SU`` user, ``SA`` account, ``SO`` operator, ``SN`` server, ``SC`` cluster,
``SX`` curve), the third is always ``A`` and the fourth one of ``A``-``P`` (the type's low bits are zero); the token
pass's pattern (``detectors.TOKENS``) asks for that shape, and the checksum here tells a seed from any other word of
that shape (one in 65,536 passes by chance): a placeholder (``SUAAAA...``) or an identifier stays.
"""

from __future__ import annotations

import base64
import binascii

SEED_LENGTH = 58


def _crc16(data: bytes) -> int:
    """CRC-16/XMODEM (polynomial 0x1021, initial 0), as nkeys computes it (``binascii.crc_hqx``)."""
    return binascii.crc_hqx(data, 0)


def is_seed(word: str) -> bool:
    """Whether ``word`` is an nkey seed: its base32 decodes to 36 bytes whose last two are the CRC of the rest."""
    if len(word) != SEED_LENGTH:
        return False
    try:
        raw = base64.b32decode(word + "======")
    except (binascii.Error, ValueError):
        return False
    return len(raw) == 36 and int.from_bytes(raw[34:], "little") == _crc16(raw[:34])

"""Ed25519 point arithmetic in plain Python (RFC 8032 section 5.1), for crafting adversarial keys and signatures:
non-canonical encodings, small-order and mixed-order points, signatures made with an explicit scalar. Slow and not
constant-time: test inputs only, never the project's signing or verification."""

from __future__ import annotations

import hashlib

P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493
D = -121665 * pow(121666, P - 2, P) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)
Point = tuple[int, int, int, int]  # extended coordinates (X, Y, Z, T)
IDENTITY: Point = (0, 1, 1, 0)


def add(a: Point, b: Point) -> Point:
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    aa, bb = (y1 - x1) * (y2 - x2) % P, (y1 + x1) * (y2 + x2) % P
    cc, dd = t1 * 2 * D * t2 % P, z1 * 2 * z2 % P
    e, f, g, h = bb - aa, dd - cc, dd + cc, bb + aa
    return e * f % P, g * h % P, f * g % P, e * h % P


def multiply(n: int, point: Point) -> Point:
    result = IDENTITY
    while n:
        if n & 1:
            result = add(result, point)
        point, n = add(point, point), n >> 1
    return result


def decode(raw: bytes, *, canonical: bool = True) -> Point | None:
    """The point of a 32-byte encoding, or None; ``canonical=False`` reads y >= p modulo p, as lax decoders do."""
    y = int.from_bytes(raw, "little") & ((1 << 255) - 1)
    sign = raw[31] >> 7
    if y >= P:
        if canonical:
            return None
        y -= P
    x2 = (y * y - 1) * pow(D * y * y + 1, P - 2, P) % P
    x = pow(x2, (P + 3) // 8, P)
    if (x * x - x2) % P:
        x = x * SQRT_M1 % P
    if (x * x - x2) % P or (x == 0 and sign):
        return None
    if x & 1 != sign:
        x = P - x
    return x, y, 1, x * y % P


def encode(point: Point) -> bytes:
    x, y, z, _ = point
    zi = pow(z, P - 2, P)
    x, y = x * zi % P, y * zi % P
    return (y | (x & 1) << 255).to_bytes(32, "little")


BASE = decode((4 * pow(5, P - 2, P) % P).to_bytes(32, "little"))
assert BASE is not None


def secret_scalar(seed: bytes) -> tuple[int, bytes]:
    """RFC 8032's clamped scalar and nonce prefix of a 32-byte seed."""
    digest = hashlib.sha512(seed).digest()
    scalar = int.from_bytes(digest[:32], "little")
    scalar &= (1 << 254) - 8
    scalar |= 1 << 254
    return scalar, digest[32:]


def sign_as(seed: bytes, public: bytes, message: bytes) -> bytes:
    """The seed's signature of ``message`` with ``public`` in the hash (any claimed key: a mixed-order one too)."""
    scalar, prefix = secret_scalar(seed)
    r = int.from_bytes(hashlib.sha512(prefix + message).digest(), "little") % L
    big_r = encode(multiply(r, BASE))
    k = int.from_bytes(hashlib.sha512(big_r + public + message).digest(), "little") % L
    return big_r + ((r + k * scalar) % L).to_bytes(32, "little")

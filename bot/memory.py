"""Give the heap pages freed during start-up back to the operating system.

Start-up (imports, pydantic schemas, the sanitizer's automata, the catalog's introspection) allocates and frees
megabytes of temporaries; glibc keeps freed pages in its heap, so they stay in the process's RSS for its whole
life. ``malloc_trim(0)`` once the process has started returns them (about 4 MiB on a runner). Elsewhere than
glibc it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc


def return_free_heap() -> bool:
    """Collect garbage, then ask glibc to release free heap pages; True when it released any."""
    gc.collect()
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        return False
    return bool(trim(0))

"""The name part of what RE2 searches for in an assignment (``NAME=value``, ``name: value``, a flag, a quoted env
entry): only names in which a sensitive word is a word of its own, as ``secret_names.name_kind`` splits a name.

``name_kind`` splits at "_", "." and "-", and where a lower-case letter or digit meets a capital, and accepts a name
only when one of its words ends with (pass, token, key ...), starts with (secret..., credential...) or is (auth)
a sensitive word. So a word that must *end* its word is followed here by the name's end, a separator, or (when its
last letter is lower case) a capital; one that may *start* it follows the name's start, a separator, or a lower-case
letter or digit when it starts with a capital. "aaatokenbbb=" is then no candidate: a run of such names, each "="
a candidate parsed in Python, ran at 14 MB/s ("name runs", ``bench/bench_sanitize.py``); a name ``name_kind``
refuses costs nothing when RE2 never reports it. This is a necessary condition of ``name_kind``, never a
sufficient one: ``tests/test_sanitize_names.py`` checks on generated names that every name the bounded pattern
parses and ``name_kind`` accepts is still found.

The characters before and after the word are unbounded (``*``, not ``{0,40}``): counters there multiplied RE2's
DFA states (see ``context_patterns._FINDER_NAME``); the bounded pattern that parses a candidate refuses a longer name.
"""

from __future__ import annotations

_AFTER_LOWER = r"(?:(?:[_.-]|[A-Z])[A-Za-z0-9_.-]*)?"  # the rest of the name after a word ending lower case
_AFTER_UPPER = r"(?:[_.-][A-Za-z0-9_.-]*)?"
# Words that end a word (name_kind: endswith, or the whole word: auth), split before their last letter.
_ENDING = (
    "pass", "password", "passwd", "passphrase", "passwort", "passe", "pwd",
    "secret", "token", "tokens", "signature", "key", "auth",
)  # fmt: skip


def _ending(case: str) -> str:
    return "|".join(f"(?i:{word[:-1]}){getattr(word[-1], case)()}" for word in _ENDING)


# "pw" and "sig" are words to name_kind too, but two letters are common in any text (a "pw" then a capital in
# random base64 every few hundred bytes, each a candidate), and the bounded pattern that parses a candidate
# needs one of its words anyway: they count only in a name that has one (2PW_TOKENSNAME: the "pw" decides).
_SHORT_WORD = r"(?:(?i:p)w|(?i:si)g)(?:[_.-]|[A-Z])|(?:(?i:p)W|(?i:si)G)[_.-]"
_SHORT_WORD_LAST = r"(?i:p)[wW]|(?i:si)[gG]"
_PARSED_WORD = r"(?i:pass|pwd|secret|token|credential|signature|auth|key)"
_PARSED_CAPITAL = r"P(?i:ass|wd)|S(?i:ecret|ignature)|T(?i:oken)|C(?i:redential)|A(?i:uth)|K(?i:ey)"
_SHORT_THEN_PARSED = (  # the capital that ends a lower-case short word may start the parsed one (sigSIGNATURE)
    rf"(?:(?i:p)w|(?i:si)g)(?:(?:[_.-]|[A-Z])[A-Za-z0-9_.-]*{_PARSED_WORD}|{_PARSED_CAPITAL})"
    rf"|(?:(?i:p)W|(?i:si)G)[_.-][A-Za-z0-9_.-]*{_PARSED_WORD}"
    r"|(?i:p)wD|(?i:si)gN(?i:ature)"  # or overlaps it: pwDb is "pwd" to the pattern, "pw" "db" to name_kind
)
# The plural of a key's compound ending the name (APP_KEYS, apiKeys: ``secret_names._plural_key_kind``), the stems of
# ``context_patterns._KEY``.
_PLURAL_KEY = (
    r"[A-Za-z0-9_.-]*(?i:api|access|private|secret|master|signing|encryption|app|account|sharedaccess|client|auth"
    r"|license|session|hmac)[_.-]?(?i:keys)[_.-]*"
)
# ("key" may follow any letters: name_kind takes "xkey" in "my_xkey" for a key.)
# An ending word may have one or two digits glued on (``password2``: ``shapes._NUMBERED_SECRET``; name_kind refuses
# the others, ``key1``, ``pass2``: a superset here costs fewer instructions than the exact words, +96 against +444).
FINDER_NAME = (
    rf"(?:[A-Za-z0-9_.-]*(?:(?:{_ending('lower')})[0-9]{{0,2}}{_AFTER_LOWER}"
    rf"|(?:{_ending('upper')})[0-9]{{0,2}}{_AFTER_UPPER})"
    r"|(?:(?:[A-Za-z0-9_.-]*[_.-])?(?i:secret|credential)|[A-Za-z0-9_.-]*[a-z0-9](?:S(?i:ecret)|C(?i:redential)))"
    r"[A-Za-z0-9_.-]*"
    rf"|[A-Za-z0-9_.-]*(?:{_SHORT_THEN_PARSED}"
    rf"|{_PARSED_WORD}[A-Za-z0-9_.-]*(?:{_SHORT_WORD}|{_SHORT_WORD_LAST}))[A-Za-z0-9_.-]*"
    rf"|{_PLURAL_KEY})"
)

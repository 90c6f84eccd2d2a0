"""The secret detectors, written for RE2 (linear-time matching) with every repetition bounded.

Why bounded: RE2 matches one search in time linear in the text it scans, but a loop of searches (find all,
then resume) can rescan: a candidate that starts early and stays alive to the end of the line is re-examined
by each later search (Rust's regex documents the same O(n^2) worst case for find-all). With every repetition
bounded by a constant W, a candidate dies W bytes after it starts, so each search scans at most W bytes
beyond the point where the previous one resumed: the whole loop is O(n * W), linear in the text. Values
longer than their bound are extended in Python by a single forward scan (``extend_value``), never rescanned.
One exception, in a finder only (what RE2 searches for, not what Python parses): the characters of an
assignment's name before its sensitive word (``context_patterns._FINDER_NAME``), for the reason and the
argument given there.

Every detector has a group named ``v``: the secret, the only part replaced. What surrounds it (the name of an
assignment, the user of a URL, a boundary character RE2 cannot look behind for) stays visible, and the next
search resumes at the end of ``v``, so a boundary character consumed here is seen again by the next search.

Two passes (``TOKENS`` then ``CONTEXT``): tokens that identify themselves by a prefix (``xoxb-``, ``ghp_``)
are replaced first, so the context detectors (``aws ... <key>``, ``scheme://user:<pw>@``, ``NAME=<value>``)
never keep a token visible as their context.

This module holds what every detector is (``Detector``) and the first pass, ``TOKENS``; the second pass, ``CONTEXT``,
is ``context_detectors.py`` (with ``context_tools.py``): its patterns are built from shared pieces
(``context_patterns.py``: names, values, the finders' candidate shapes) that have nothing to do with the tokens'.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.sanitize.echoed import ECHO_HINT
from bot.sanitize.literals import Literal
from bot.sanitize.tables import HEADER_HINT

# The longest value a context detector captures in one piece; a longer one is extended by extend_value.
VALUE_BOUND = 256
# RE2 refuses repetitions over 1000; every bound here is VALUE_BOUND or less, plus fixed context.

# A token starts at the text's start or after a character not part of tokens. Prefixes distinctive enough to
# never occur inside ordinary words (xoxb-, sk-ant-, ghp_, github_pat_, glpat-) need no boundary, so a token
# glued to the text before it is still found.
_B = r"(?:^|[^A-Za-z0-9_-])"
_ANY = r"(?:[^A-Za-z0-9_-])?"  # optional, so these start as early as a bounded detector would (leftmost wins)
_GITLAB = "glpat|glrt|gldt|glptt|glsoat|gloas|glcbt|glimt|glagent|glffct|glft"
_AWS_ID = "AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA"
_VAULT_ID = r"(?m:^)(?:id[ \t]{2,32}|[ \t]{0,16}\"id\":[ \t]{0,4}\")"  # vault token lookup's table row, JSON key
_CONNECTION_PASSWORD = r"(?i:;[ \t]{0,4}(?:password|pwd)[ \t]{0,4}=[ \t]{0,4})"


@dataclass(frozen=True)
class Detector:
    """One named pattern; ``check`` names a value-shape check applied in Python (``shapes.py``).

    ``finder``, when set, is what RE2 searches for instead of ``pattern``: the same match narrowed by a
    necessary condition of the check (a value Python would reject whatever its context is left out), so the
    candidates Python would only dismiss are never reported. Python still parses with ``pattern``."""

    kind: str
    pattern: str
    check: str = ""
    finder: str = ""
    # Searched by an automaton of its own, not in its pass's alternation (see automata.DetectorPass); then
    # ``literals``: strings every match contains (or, for a check that reads around the candidate, strings the text
    # must hold for the check to accept one: a Key Vault value's id); text without one of them skips that automaton.
    own_automaton: bool = False
    literals: tuple[Literal, ...] = ()  # (a tuple among them: a choice, ``literals.literal_containment``)
    # Several ``own_automaton`` detectors next to each other with the same ``group`` share one automaton (see
    # ``automata._groups``), scanned whenever the pass runs: their ``literals`` then gate nothing. For rare
    # detectors whose literals ordinary text holds anyway, where a literal gate each cost a search of the text
    # each, more than one scan of them all.
    group: str = ""
    # What the unanchored scan looks for, when set: the start of ``finder`` (every ``finder`` match starts with a
    # ``search`` match at the same byte) without its long value, checked by an anchored ``finder`` match at each
    # hit (see automata.Automaton). A value counting to 255 in the scan made RE2 build DFA states for ever on
    # text of overlapping candidates (one run of "a...token...b=" segments: 0.05 MB/s, found by review). It also
    # keeps each hit cheap: RE2 finds an unanchored match's start by running the scan's reversed automaton back
    # from the match's end, so a scan ending in a long value (``{1,256}``) ran back that far at every hit, over
    # every detector's reversed threads at once (see ``_shortest``).
    search: str = ""
    # A token whose first characters are a run of this many alphanumerics before what the pattern finds (Terraform
    # Cloud's 14-character id before ".atlasv1."): the secret's span starts that much earlier when the run is there
    # (``lead_start``), so no automaton keeps a count alive on every word for it.
    lead: int = 0


def lead_start(data: bytes, start: int, lead: int, floor: int) -> int:
    """Where a token with ``lead`` alphanumerics before ``start`` begins: ``start - lead`` when those bytes are
    alphanumerics after ``floor`` (the end of the text already replaced), else ``start`` (the rest is still hidden)."""
    begin = start - lead
    return begin if begin >= floor and data[begin:start].isalnum() and data[begin:start].isascii() else start


def _shortest(pattern: str) -> str:
    """``pattern`` with its final repetition ``{n,m}`` cut to ``{n}``: a ``Detector.search`` that matches at
    exactly the bytes where ``pattern`` matches (nothing follows that repetition), without the long count."""
    head, least, tail = re.fullmatch(r"(.*)\{(\d+),\d+\}(\)*)", pattern, re.S).groups()  # type: ignore[union-attr]
    return f"{head}{{{least}}}{tail}"


def _token(kind: str, pattern: str, check: str = "") -> Detector:
    """A detector whose pattern ends with its value's repetition: the scan looks for its shortest match.
    ``not_placeholder``: a documentation's example with its random part written as x's (``sk_live_xxxxxxxx``,
    ``shapes.trivial``) is no key (the vendors whose examples are written so)."""
    return Detector(kind, pattern, check, search=_shortest(pattern))


TOKENS: tuple[Detector, ...] = (
    _token("slack_webhook", r"(?P<v>https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_+-]{8,256})"),
    # A Discord webhook's token (the id before it is public): apart, searched only in text holding its path
    Detector("discord_webhook",
             r"(?i:discord(?:app)?\.com/api/webhooks/)[0-9]{16,20}/(?P<v>[A-Za-z0-9_-]{60,256})",
             search=r"(?i:discord(?:app)?\.com/api/webhooks/)[0-9]{16,20}/[A-Za-z0-9_-]{60}",
             own_automaton=True, literals=(b"/api/webhooks/",)),
    _token("slack_token", _ANY + r"(?P<v>xox[abposre](?:\.xox[a-z])?-[A-Za-z0-9-]{8,256})", "not_placeholder"),
    _token("slack_token", _ANY + r"(?P<v>xapp-[A-Za-z0-9-]{10,256})"),
    _token("anthropic_key", _ANY + r"(?P<v>sk-ant-[A-Za-z0-9_-]{16,256})"),
    _token("openai_key", _B + r"(?P<v>sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,256})", "not_placeholder"),
    _token("github_token", _ANY + r"(?P<v>(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,256})", "not_placeholder"),
    _token("github_token", _ANY + r"(?P<v>github_pat_[A-Za-z0-9_]{22,256})"),
    _token("gitlab_token", _ANY + rf"(?P<v>(?:{_GITLAB})-[A-Za-z0-9_-]{{20,256}})"),
    _token("stripe_key", _B + r"(?P<v>(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,256})", "not_placeholder"),
    Detector("npm_token", _B + r"(?P<v>npm_[A-Za-z0-9]{36})(?:[^A-Za-z0-9]|$)"),
    _token("sendgrid_key", r"(?:^|[^A-Za-z0-9_.-])(?P<v>SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64})"),
    _token("vault_token", _ANY + r"(?P<v>hv[sbr]\.[A-Za-z0-9_-]{24,256})"),
    # vault token lookup's own token: its table's "id" row and -format=json's "id" key, an old-style token (s., b., r.
    # and 24 characters) or a short hvs. that the prefix above leaves (its "accessor" row is no secret)
    Detector("vault_token", _VAULT_ID + r"(?P<v>hv[sbr]\.[A-Za-z0-9_-]{8,256}|[sbr]\.[A-Za-z0-9]{20,256})",
             search=_VAULT_ID + r"(?:hv[sbr]\.[A-Za-z0-9_-]{8}|[sbr]\.[A-Za-z0-9]{20})"),
    # A crypt(3) hash anywhere (useradd -p, chpasswd -e, an Ansible var): $id$[params$]salt$hash, its hash part
    # at least 22 characters (md5crypt; sha512crypt 86, bcrypt 53 with its salt)
    _token("password_hash",
           r"(?P<v>\$(?:[156]|2[abxy]|y|7|apr1)(?:\$[./A-Za-z0-9=,]{1,64}){1,3}\$[./A-Za-z0-9]{22,256})"),
    # vault operator init: the unseal (or recovery) key shares, any threshold of which unseals Vault
    _token("vault_unseal_key", r"(?:Unseal|Recovery) Key \d{1,2}: {0,4}(?P<v>[A-Za-z0-9+/=]{20,256})"),
    # A k3s/RKE2 join token (/var/lib/rancher/k3s/server/token): K10<CA hash>::<user>:<password>
    _token("k3s_token", _B + r"(?P<v>K10[0-9a-f]{64}::[a-z0-9_-]{1,32}:[A-Za-z0-9]{16,256})"),
    _token("huggingface_token", _B + r"(?P<v>hf_[A-Za-z0-9]{30,256})"),
    Detector("digitalocean_token", _B + r"(?P<v>do[opr]_v1_[a-f0-9]{64})"),
    # PyPI upload tokens: a macaroon whose base64 starts with its location (pypi.org, test.pypi.org)
    _token("pypi_token", _ANY + r"(?P<v>pypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{16,256})"),
    _token("google_oauth_token", _B + r"(?P<v>ya29\.[A-Za-z0-9_-]{20,256})"),  # gcloud auth print-access-token
    Detector("shopify_token", _B + r"(?P<v>shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32})(?:[^A-Za-z0-9]|$)"),
    _token("stripe_key", _B + r"(?P<v>whsec_[A-Za-z0-9]{24,256})"),  # a webhook's signing secret
    _token("gitlab_token", _B + r"(?P<v>GR1348941[A-Za-z0-9_-]{20,256})"),  # a runner registration token
    Detector("brevo_key", _B + r"(?P<v>xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16})"),
    _token("grafana_token", _ANY + r"(?P<v>glsa_[A-Za-z0-9_]{32,256})"),  # a service account's token
    _token("atlassian_token", _B + r"(?P<v>ATATT3[A-Za-z0-9_=-]{32,256})"),
    Detector("newrelic_key", _B + r"(?P<v>NRAK-[A-Z0-9]{27})(?:[^A-Za-z0-9]|$)"),
    # Doppler's service (dp.st.<config>.), personal, CLI, service account, SCIM and audit tokens
    _token("doppler_token",
           _B + r"(?P<v>dp\.(?:st|pt|ct|sa|scim|audit)\.(?:[A-Za-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,256})"),
    _token("linear_key", _B + r"(?P<v>lin_(?:api|oauth)_[A-Za-z0-9]{40,256})"),
    _token("heroku_token", _B + r"(?P<v>HRKU-[A-Za-z0-9_-]{20,256})"),  # heroku auth:token, HEROKU_API_KEY
    # A Backblaze B2 application key (rclone.conf's ``key =``, B2_APPLICATION_KEY): K00 and a digit, 31 characters
    # as B2 issues them today (up to 44 read, as a longer one of the same shape is no ordinary word either)
    Detector("b2_application_key", _B + r"(?P<v>K00[0-9][A-Za-z0-9+/]{27,40})(?:[^A-Za-z0-9+/=]|$)"),
    # An LDAP password hash after its scheme (olcRootPW:, userPassword: in LDIF, slappasswd's output): the hash
    # is what an offline guess starts from
    _token("password_hash",
           r"(?P<v>\{(?:S?SHA(?:256|384|512)?|S?MD5|PBKDF2(?:-SHA(?:1|256|512))?|ARGON2|CRYPT)\}"
           r"[A-Za-z0-9+/=.\x24,-]{8,256})"),  # ("\x24": "$", see echoed._PROMPT)
    # A Microsoft Teams incoming webhook's URL (...webhookb2/<ids>/IncomingWebhook/<hex>/<guid>[/V2<key>]): anyone
    # holding it posts to the channel. Apart, searched only in text holding its path's word.
    Detector("teams_webhook",
             r"IncomingWebhook/(?P<v>[0-9A-Za-z]{32}/[0-9A-Fa-f-]{36}(?:/V2[A-Za-z0-9_-]{1,256})?)",
             own_automaton=True, literals=(b"IncomingWebhook/",)),
    # Terraform Cloud / Enterprise API tokens (~/.terraform.d/credentials.tfrc.json, TF_TOKEN_app_terraform_io):
    # <14 alphanumerics>.atlasv1.<60-70>. Found from ".atlasv1." on, the 14 before it taken by ``lead``: a count of 14
    # before the literal, alive after every boundary, multiplied the other detectors' DFA states (random base64 ran
    # at a third of its speed), and an automaton of its own cost a substring search of every text for its literal.
    Detector("terraform_token", r"(?P<v>\.atlasv1\.[A-Za-z0-9_=-]{60,256})", lead=14,
             search=r"(?P<v>\.atlasv1\.[A-Za-z0-9_=-]{60})"),
    # Sentry's organization (sntrys_ + base64 JSON + "_" + secret) and user (sntryu_ + 64 hex) auth tokens
    _token("sentry_token", _B + r"(?P<v>sntry[su]_[A-Za-z0-9+/=_]{32,256})"),
    _token("grafana_token", _B + r"(?P<v>glc_[A-Za-z0-9+/=_]{32,256})"),  # a Grafana Cloud access policy token
    Detector("databricks_token", _B + r"(?P<v>dapi[a-f0-9]{32}(?:-[0-9]{1,2})?)(?:[^A-Za-z0-9]|$)"),
    Detector("postman_key", _B + r"(?P<v>PMAK-[a-f0-9]{24}-[a-f0-9]{34})(?:[^A-Za-z0-9]|$)"),
    Detector("pulumi_token", _B + r"(?P<v>pul-[a-f0-9]{40})(?:[^A-Za-z0-9]|$)"),
    Detector("buildkite_token", _B + r"(?P<v>bkua_[a-f0-9]{40})(?:[^A-Za-z0-9]|$)"),
    _token("tailscale_key",
           _B + r"(?P<v>tskey-(?:api|auth|client|webhook|scim)-[A-Za-z0-9]{6,32}-[A-Za-z0-9]{16,256})"),
    _token("planetscale_token", _B + r"(?P<v>pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,256})"),
    Detector("age_key", r"(?P<v>AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})"),
    # A NATS nkey seed printed without its .creds armour (``nsc generate nkey``, a ``.nk`` file, ``NATS_SEED=``): S, the
    # key's type, "A" and A-P, then 54 base32 characters; its checksum decides (``nkeys.is_seed``). Whole in the scan:
    # its count of 54 starts only after a boundary, so one at most is alive at a time (a scan of its first five
    # characters made every "SUAP..." word a hit to verify, 7 MB/s on a line of them each).
    Detector("nats_seed", _B + r"(?P<v>S[UAONCX]A[A-P][A-Z2-7]{54})(?:[^A-Za-z0-9_-]|$)", check="nkey_seed"),
    # A Telegram bot's token, often in a logged URL (https://api.telegram.org/bot<id>:<secret>/sendMessage)
    Detector("telegram_token", r"(?:^|[^0-9])[0-9]{6,12}:(?P<v>AA[A-Za-z0-9_-]{33})(?:[^A-Za-z0-9_-]|$)"),
    # Twilio API key secrets are SK + 32 lowercase hex (the account SID, AC..., is an identifier)
    Detector("twilio_key", r"(?:^|[^A-Za-z0-9_])(?P<v>SK[0-9a-f]{32})(?:[^A-Za-z0-9_]|$)"),
    # A Twilio auth token beside its account SID (an identifier): a client's next positional argument
    # (``Client("AC<sid>", "<token>")`` in Python, PHP, C#, Node) or the password after it (``-u AC<sid>:<token>``)
    Detector("twilio_auth_token",
             r"(?:^|[^A-Za-z0-9_])AC[0-9a-f]{32}(?:[\"']?[ \t]{0,4},[ \t]{0,4}[\"']?|:)(?P<v>[0-9a-f]{32})"
             r"(?:[^A-Za-z0-9_]|$)"),
    Detector("google_api_key", _B + r"(?P<v>AIza[0-9A-Za-z_-]{35})"),
    Detector("aws_access_key_id", r"(?:^|[^A-Z0-9])(?P<v>(?:" + _AWS_ID + r")[A-Z0-9]{16})(?:[^A-Z0-9]|$)"),
    Detector(
        "jwt",
        # header.payload. (the rest of a long payload and the signature are taken by the continuation scan)
        _B + r"(?P<v>eyJ[A-Za-z0-9_-]{4,256}\.eyJ[A-Za-z0-9_-]{4,256}\.?[A-Za-z0-9_-]{0,256})",
        search=_B + r"eyJ[A-Za-z0-9_-]{4,256}\.eyJ[A-Za-z0-9_-]{4}",
    ),
    _token(
        "azure_key",
        # Azure storage / Service Bus connection strings and SAS tokens.
        r"(?i:(?:AccountKey|SharedAccessKey|SharedAccessSignature)\s{0,4}=\s{0,4})(?P<v>[A-Za-z0-9+/%=&:.-]{20,512})",
    ),
    _token("azure_sas", r"(?:[?&;]|\\u0026)sig=(?P<v>[A-Za-z0-9%+/=._~-]{16,512})"),
    # An AWS session token under its own names (sts assume-role's JSON, ~/.aws/credentials, the environment):
    # 300-1200 characters, longer than the assignments' quoted value bound (256), so no assignment finds it.
    _token(
        "aws_session_token",
        # (also botocore's debug log of a request's headers: 'X-Amz-Security-Token': b'IQoJ...', a bytes literal)
        # (and vault read aws/creds' table: "security_token" then blanks to its column)
        r"(?i:sessiontoken|session_token|security[_-]token|securitytoken)[\"']?"
        r"(?:[ \t]{0,4}[:=][ \t]{0,4}(?:b?[\"'])?|[ \t]{2,32})"
        r"(?P<v>[A-Za-z0-9+/=]{100,1000})",
    ),
    # A connection string's password after ";" (ODBC, ADO.NET, JDBC for SQL Server): its value runs to the next
    # ";" whatever it starts with (``;Pwd=,tR3=Jm;``, ``;Pwd={,tR3=Jm};``: "," "&" ")" "}" "]" "{" end or open a
    # value elsewhere, not here). Stops at a quote or a line's end. ODBC's braced value holding a ";" is cut there
    # (``{a;b}``): finding its closing brace cost a 256-byte scan at each ";Pwd={" (2.4 MB/s on a run of them).
    Detector(
        "password",
        _CONNECTION_PASSWORD + r"(?P<v>[^;\s\"'](?:[^;\n\"']{0,254}[^;\s\"'])?)",
        "connection_password",
        search=_CONNECTION_PASSWORD + r"[^;\s\"']",  # the value's first character: no long count in the scan
    ),
    # A PuTTY .ppk key file (bot/sanitize/putty.py): the first base64 line after "Private-Lines: N" (a newline, or
    # in a JSON string its "\n" escape, between them; indented in a YAML block), extended over the block's lines by
    # putty.private_lines_end; then the MAC line's hex ("Private-Hash:" in version 1 files).
    Detector(
        "private_key",
        r"Private-Lines:[ \t]{0,4}[0-9]{1,6}[ \t]{0,4}(?:\r?\n|\\r\\n|\\n)[ \t]{0,16}(?P<v>[A-Za-z0-9+/=]{1,256})"
        r"(?:[\r\n\\\"']|$)",
        check="private_lines",
    ),
    _token("private_key_mac", r"Private-(?:MAC|Hash):[ \t]{0,4}(?P<v>[0-9a-fA-F]{16,128})"),
    Detector(
        "azure_storage_key",
        # A storage account key on its own (``az storage account keys list``: "value": "<88 chars>"): 64 random
        # bytes in base64. "sha512-<same shape>" (npm integrity) is not one: "-" is not a boundary here.
        r"(?:^|[^A-Za-z0-9+/=_-])(?P<v>[A-Za-z0-9+/]{86}==)(?:[^A-Za-z0-9+/=]|$)",
        check="generated",
        # Its count to 86 is alive all along base64; in one automaton with the others it multiplied their
        # states: random base64 with ":@._-" ran at 2 MB/s (review of #11), apart it adds instead.
        own_automaton=True,
        literals=(b"==",),
    ),
    # A table's header naming a secret's column (``tables.py``): never redacted here, reported to the caller of the
    # token pass, which then reads the table's rows (``reports.py``). Last, so that a token at the same byte wins.
    Detector("table_header", HEADER_HINT, check="reported"),
    # A command echoed after a prompt sign that may ask for a secret's value (``echoed.py``): reported the same way.
    Detector("echoed_command", ECHO_HINT, check="reported"),
)

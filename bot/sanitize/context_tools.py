"""The second pass's detectors that know a tool's or a format's own spelling of a secret: a URL's password and a
Go DSN's, ``aws ... <key>``, Authorization and Bearer headers, a client's password flag (``mysql -p``, ``curl -u``,
``sqlcmd -P``, ``docker login -p``), SQL that sets a password, ACL tokens, cookies, htpasswd, .pgpass and .netrc
lines. ``context_detectors.CONTEXT`` places them, in this order, between its line-start and its name-based
detectors; every repetition is bounded for the reason given in ``detectors.py``.
"""

from __future__ import annotations

from bot.sanitize.context_patterns import (
    _ENV_WORD_HEAD,
    _FINDER_NAME,
    _NAME,
    QUOTED,
)
from bot.sanitize.detectors import Detector, _token

# A URL's user: plain characters, possibly with the marker of a token redacted by the first pass.
_USER = r"[^\s:/@\"'<>\[\]]{0,64}"
_USER_MARKER = r"(?:\[REDACTED:[a-z_]{1,40}(?:#[0-9a-f]{6})?\])?"

# The SQL around a password: [WITH] [ENCRYPTED] PASSWORD after WITH or after USER|ROLE name (not the word in prose:
# "the password 'expired' message"), and MySQL's IDENTIFIED [WITH plugin] BY.
_SQL_PASSWORD_HEAD = (
    r"(?i:\b(?:(?:with|(?:user|role)[ \t]{1,4}[^\s;]{1,128})"
    # PostgreSQL's role options before PASSWORD (ALTER ROLE x WITH LOGIN PASSWORD 'pw')
    r"(?:[ \t]{1,4}(?:no)?(?:login|superuser|createdb|createrole|inherit|replication|bypassrls)){0,6}"
    r"(?:[ \t]{1,4}encrypted)?[ \t]{1,4}password"
    r"|identified(?:[ \t]{1,4}with[ \t]{1,4}[a-z0-9_]{1,64})?[ \t]{1,4}by))[ \t]{1,4}"
)

_CLIENT_PASSWORD_HEAD = (
    r"(?:(?:\b(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop|mongofiles)\b"
    r"[^\n]{0,256}?\s-p|\b(?:sqlcmd|bcp)\b[^\n]{0,256}?\s-P|\bcqlsh\b[^\n]{0,256}?\s-p"
    r"|\bldap(?:search|modify|add|delete|passwd|whoami|compare|modrdn|exop)\b[^\n]{0,256}?\s-w"
    r"|\bopenssl\b[^\n]{0,256}?\s-k"
    # htpasswd -b[c] FILE USER PW, htpasswd -nb USER PW: the password is the last word
    r"|\bhtpasswd[ \t]{1,4}-[A-Za-z]{0,8}b[A-Za-z]{0,8}[ \t]{1,4}[^\s]{1,256}(?:[ \t]{1,4}[^\s]{1,128})?)[ \t]{1,4}"
    r"|(?:^|\s)-pass(?:in|out|word)?[ \t]{1,4}pass:)"
)
_SECURE_STRING_HEAD = (
    r"\"?Type\"?[ \t]{0,4}:[ \t]{0,4}\"?SecureString\"?,?\s{0,64}\"?Value\"?[ \t]{0,4}:[ \t]{0,4}"
)
_FLAG_ITEM_HEAD = (
    r"(?:(?m:^)[ \t]{0,64}-[ \t]{1,4}[\"']?|\")"
    rf"(?P<name>-{{1,2}}{_NAME})"
    r"(?:[\"']?[ \t]{0,4}\n[ \t]{0,64}-[ \t]{1,4}|\",[ \t]{0,4}\n?[ \t]{0,64})"
)

# A Go MySQL DSN's user before its password (``dsn_password``): a boundary, then the user name and ":".
_DSN_USER = r"(?:^|[\s\"'=(])[A-Za-z0-9_.-]{0,64}:"

# A .pgpass field (``password`` below): "\\" escapes the next character, so "\\:" is no separator.
_ESCAPED = r"\\[^\s]"
_PGPASS_FIELD = rf"(?:[^\s:\\]|{_ESCAPED}){{1,128}}"

# curl's, wget's and httpie's user flag before "user:password" (``basic_auth``)
# The flag and its value on one line: a line ending in "-u" (``sort -u``, ``uniq -u``, ``set -u``) is no user flag
# for the next line's first word (a URL's ``https:`` read as a user, its ``//host/path`` as the password).
_USER_FLAG = r"(?:^|\s)(?:-u|--user|--proxy-user)(?:[ \t]{1,4}|=)"

_RABBITMQ_USER_HEAD = (
    r"\brabbitmqctl[ \t]{1,4}(?:-[^\n]{0,128}?[ \t]{1,4})?(?:add_user|change_password)[ \t]{1,4}[^\s]{1,128}"
    r"[ \t]{1,4}"
)


def _url_password_detector(separator: str, slash: str, literal: bytes) -> Detector:
    """A URL's password after a scheme and ``separator`` (the pattern of "://", as written or JSON-escaped, whose
    "/" is ``slash``). Each in an automaton of its own: the scheme's threads start at every letter after "+", "-" or
    "." and count to 20, and the set of live counts, times the other detectors' states, made RE2 build new DFA
    states on random base64 for ever. The host may be empty (libpq's ``postgresql://app:PW@/orders?host=/run/pg``:
    a Unix socket, the path right after "@")."""
    return Detector(
        "url_password",
        rf"(?i:\b[a-z][a-z0-9+.-]{{1,20}}{separator})" + _USER + _USER_MARKER + _USER + ":"
        rf"(?P<v>[^\s\"'<>]{{1,256}})@(?:[A-Za-z0-9\[]|{slash})",
        check="url_password",
        own_automaton=True,
        literals=(literal, b"@"),
    )


# In ``CONTEXT``'s order (see there): after the line-start detectors, before the name-based ones.
TOOL_FORMATS: tuple[Detector, ...] = (
    Detector(
        "aws_secret_key",
        # A 40-character base64 token within 60 characters after "aws" on the same line (not a hex digest).
        r"(?i:aws)[^\n]{0,60}?(?:[^A-Za-z0-9/+=_])(?P<v>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)",
        check="not_hex",
    ),
    _token(
        "authorization",
        # also after a "\n" escape (python's http.client debug: send: b'...\r\nAuthorization: Basic ...\r\n'), and
        # as a web server's configuration sets it, a blank and a quoted scheme (proxy_set_header Authorization
        # "Basic ..."); the value never holds a backslash (an escape's, after it)
        r"(?i:(?:\b|\\n)(?:proxy-)?authorization(?:[\"']?\s{0,4}[:=]\s{0,4}[\"'`]?"
        r"(?:(?:bearer|basic|token|digest|negotiate|aws4-hmac-sha256|ssws|apikey)\s{1,4})?"
        r"|[ \t]{1,4}[\"'](?:bearer|basic|token|digest|negotiate|aws4-hmac-sha256|ssws|apikey)\s{1,4}))"
        r"(?P<v>[^\s\"',;\\]{1,256})",
        check="not_placeholder",
    ),
    Detector(
        "bearer",
        r"(?i:\bbearer\s{1,4})(?P<v>[A-Za-z0-9._~+/-]{8,256}={0,2})(?:[^A-Za-z0-9=]|$)",
        check="generated",
    ),
    # RFC 3986 userinfo: user ":" password "@" host. Tools print passwords holding "/" or "@" unescaped, so the
    # password runs to the last "@" of the token that is followed by a host. Access logs are full of URLs, rarely
    # with a user: only text holding the separator and "@" is searched.
    _url_password_detector("://", "/", b"://"),
    # The same URL inside a JSON string whose encoder escapes "/" (PHP's json_encode, Java's org.json and others):
    # https:\/\/user:password@host.
    _url_password_detector(r":\\/\\/", r"\\/", b":\\/\\/"),
    Detector(
        "dsn_password",
        # A Go MySQL DSN, user:password@net(address)/db. The driver splits its user-info at the LAST "@" before the
        # address, so the password may hold "@" (``backup:ab@cd@tcp(db:3306)/``): the value is lazy, running to the
        # first "@net(" after the user (a second DSN later on the line keeps its own user and host visible).
        _DSN_USER + r"(?P<v>[^\s]{1,256}?)@(?:tcp6?|udp|unix)\(",
        # Apart: its count to 256 after every "name:" (kept alive along any run without blanks, beside every other
        # detector's threads) made the alternation build new DFA states on each text it had not seen (source code
        # at 64 KiB: 1.1 ms of a 3.2 ms call for the scan, 0.4 without it), and text without "@" or "(" never
        # needs it searched.
        own_automaton=True,
        literals=(b"@", b"("),
    ),
    Detector(
        # The same DSN with the default address (localhost:3306): user:password@/dbname?params. Only before a
        # database's name, its parameters, a quote, a blank or the line's end, and never after "://" (a URL's path
        # holding "@/" is no DSN); apart, and searched only in text holding "@/".
        "dsn_password",
        _DSN_USER + r"(?P<v>(?:[^\s/]|/[^\s/])[^\s]{0,254}?)@/(?:[A-Za-z0-9_?-]|[\s\"'`]|$)",
        own_automaton=True,
        literals=(b"@/",),
    ),
    # curl -u "user:pass word" (or single quotes): the whole quoted rest is the password, blanks included, to the
    # first quote of either kind. Before the plain form, which wins nothing at the same start then (it would stop at
    # the first blank); a printed script's ``-u "$NEXUS_USER:$NEXUS_PASS"`` stays, as there. Apart, searched only in
    # text holding "-u" (as -u, --user and --proxy-user all do): in the alternation its counters grew the largest
    # automaton past what its DFA budget keeps (tests/test_sanitize_memory.py).
    Detector(
        "basic_auth",
        _USER_FLAG + r"[\"'][^:\"'\n]{0,128}:(?P<v>[^\"'\n]{1,256})",
        "not_reference",
        search=_USER_FLAG + r"[\"'][^:\"'\n]{0,128}:[^\"'\n]",
        own_automaton=True,
        literals=(b"-u",),
    ),
    _token(
        "basic_auth",  # curl -u user:password
        _USER_FLAG + r"[\"']?[^\s:\"']{0,128}:(?P<v>[^\s\"']{1,256})",
        check="not_reference",  # a printed script's ``-u "$NEXUS_USER:$NEXUS_PASS"``; ``ops:$3cr3t!x9`` is hidden
    ),
    Detector(
        "password",  # mysql -pPASSWORD, redis-cli -a PASSWORD (one counter for both: a smaller automaton)
        r"(?i:\b(?:mysql|mysqldump|mysqladmin|mariadb|redis-cli)\b)[^\n]{0,256}?\s(?:-p|-a[ \t]{1,4})"
        r"(?P<v>" + QUOTED + r"|[^\s\"'-][^\s\"']{0,255})",
        # a printed script's ``-p"$DB_PASS"`` is a variable, any other value is taken; the finder's span does not
        # hold the value, and a rejection is remembered only when the parse lies inside the span (run_pass)
        check="not_reference",
        finder=r"(?i:\b(?:mysql|mysqldump|mysqladmin|mariadb|redis-cli)\b)[^\n]{0,256}?\s(?:-p|-a[ \t]{1,4})[^\s-]",
    ),
    Detector(
        "password",
        # SQL that sets a password, as database logs and psql/mysql history print it: CREATE/ALTER USER|ROLE ...
        # [WITH] [ENCRYPTED] PASSWORD 'pw', MySQL's IDENTIFIED BY 'pw' (also IDENTIFIED WITH plugin BY 'pw').
        _SQL_PASSWORD_HEAD + r"(?P<v>'[^'\n]{1,256}'?)",
        check="not_placeholder",
        finder=_SQL_PASSWORD_HEAD + r"'[^'\n]",
    ),
    Detector(
        # The password flag of a few clients, its value the next word: mongosh/mongodump -p PW, sqlcmd/bcp -P PW,
        # ldapsearch/ldapmodify -w PW, openssl enc -k PW, htpasswd -b FILE USER PW; and OpenSSL's -passin/-passout/
        # -pass pass:PW
        "password",
        _CLIENT_PASSWORD_HEAD + r"(?P<v>" + QUOTED + r"|[^\s\"'-][^\s\"']{0,255})",
        check="not_placeholder",
        finder=_CLIENT_PASSWORD_HEAD + r"[^\s-]",
    ),
    Detector(
        # aws ssm get-parameter(s) --with-decryption: "Type": "SecureString" then "Value": the decrypted value
        # (JSON, or YAML with --output yaml)
        "secure_string",
        _SECURE_STRING_HEAD + r"(?P<v>\"[^\"\n]{1,256}\"?|[^\s,}\"][^\n,}]{0,255})",
        check="not_placeholder",
        finder=_SECURE_STRING_HEAD + r"[^\s,}]",
    ),
    Detector(
        # A container's args as a list, the flag then its value as the next item (kubectl get pod -o yaml/json):
        # "- --db-password" / "- VALUE", or "--token", "VALUE"
        "flag_value",
        _FLAG_ITEM_HEAD + r"(?P<v>" + QUOTED + r"|[^\s\"'-][^\n]{0,255})",
        check="env_string",
        finder=_FLAG_ITEM_HEAD.replace(_NAME, _FINDER_NAME) + r"[^\s-]",
    ),
    Detector(
        # Oracle's user/password@service: sqlplus, expdp/impdp, rman, a thin JDBC URL
        "password",
        r"(?i:\b(?:jdbc:oracle:(?:thin|oci):|(?:sqlplus|sqlldr|expdp|impdp|exp|imp|rman[ \t]{1,4}target=?)"
        r"(?:[ \t]{1,4}-[a-zA-Z]{1,8}){0,4}[ \t]{1,4}))[\"']?[A-Za-z0-9_#.\\$]{1,64}/(?P<v>[^\s@/\"']{1,256})@",
    ),
    Detector(
        # rabbitmqctl add_user USER PASSWORD / change_password USER PASSWORD
        "password",
        _RABBITMQ_USER_HEAD + r"(?P<v>" + QUOTED + r"|[^\s\"'-][^\s\"']{0,255})",
        finder=_RABBITMQ_USER_HEAD + r"[^\s-]",
    ),
    Detector(
        # Redis ACL rules: ACL SETUSER name ... >password, a users.acl line "user name on >password ~* +@all"
        "password",
        r"(?:(?i:\bacl[ \t]{1,4}setuser)|(?m:^)user)[ \t]{1,4}[^\s>]{1,128}(?:[ \t]{1,4}[^\s>]{1,40}){0,6}?[ \t]{1,4}>"
        r"(?P<v>[^\s]{1,256})",
        finder=r"(?:(?i:\bacl[ \t]{1,4}setuser)|(?m:^)user)[ \t]{1,4}[^\s>]{1,128}(?:[ \t]{1,4}[^\s>]{1,40}){0,6}?"
        r"[ \t]{1,4}>[^\s]",
    ),
    Detector(
        # pgbouncer's userlist.txt: "user" "password" (plain, md5... or SCRAM-SHA-256$...) alone on its line
        "password",
        r"(?m:^)\"[^\"\s]{1,64}\"[ \t]{1,8}\"(?P<v>[^\"\n]{1,256})\"[ \t]{0,8}(?m:$)",
        check="not_placeholder",
        finder=r"(?m:^)\"[^\"\s]{1,64}\"[ \t]{1,8}\"[^\"\n]",
    ),
    Detector(
        "password",  # .netrc on one line: machine HOST login USER password PW
        r"\blogin[ \t]{1,4}[^\s]{1,128}[ \t]{1,4}password[ \t]{1,4}(?P<v>[^\s]{1,256})",
        finder=r"\blogin[ \t]{1,4}[^\s]{1,128}[ \t]{1,4}password[ \t]{1,4}[^\s]",
    ),
    Detector(
        # An ACL token's secret as Consul ("SecretID:   <uuid>"), Nomad ("Secret ID    = <uuid>") and Vault (AppRole's
        # "secret_id   <uuid>", also in -format=yaml; a wrapped response's "wrapping_token:   s.<24>") print it in
        # their tables: the name ends in "ID", which makes it an identifier's to the assignment detectors, and the
        # columns are wider than their blanks. These exact names only (AccessorID, secret_id_accessor stay), the
        # value alone on its line; before key_value_line, which would take the Vault row at the same byte. A value
        # of under 8 characters is no candidate (shapes.acl_secret takes a UUID or a generated value, 8 or more).
        "token",
        r"(?m:^)[ \t]{0,16}(?:SecretID|Secret ID|secret_id|wrapping_token)(?:[ \t]{0,32}[:=][ \t]{0,64}|[ \t]{1,64})"
        r"(?P<v>[^\s\"'][^\s]{7,255})[ \t]{0,16}(?m:$)",
        check="acl_secret",
    ),
    Detector(
        # The same in -format=json / -json: "SecretID": "<uuid>", "secret_id": "<uuid>"; before quoted_pair, which
        # starts at the same quote.
        "token",
        r"\"(?:SecretID|secret_id)\"[ \t]{0,4}:[ \t]{0,4}\"(?P<v>[^\"\n]{8,256})\"",
        check="acl_secret",
    ),
    _token(
        # ... and as a command's argument or an environment variable: vault write auth/approle/login role_id=<id>
        # secret_id=<uuid>, VAULT_SECRET_ID=<uuid> (starting at the "_" before it, where no assignment starts). The
        # value stops at "=": one that ran on would swallow the next name and leave its secret to no detector
        # ("secret_id=password = 'pw'" showed the password).
        "token",
        r"(?:^|[^A-Za-z0-9])(?:secret_id|SECRET_ID)=(?P<v>[^\s\"'&;,=]{8,256})",
        check="acl_secret",
    ),
    Detector(
        "quoted_pair",
        # JSON inside a JSON string (aws secretsmanager's SecretString: {\"password\":\"x\"}); PHP and Ruby
        # arrays ('password' => 'x'), define('DB_PASSWORD', 'x'), a default (os.getenv("DB_PASSWORD", "x")).
        rf"(?P<q>\\?[\"'])(?P<name>{_NAME})\\?[\"'][ \t]{{0,4}}(?:=>|,|:)[ \t]{{0,4}}\\?[\"']"
        r"(?P<v>[^\"'\\\n]{1,256})",
        check="quoted_pair",
        finder=rf"\\?[\"']{_FINDER_NAME}\\?[\"'][ \t]{{0,4}}(?:=>|,|:)[ \t]{{0,4}}\\?[\"'][^\"'\\\n]",
    ),
    _token(
        "session_cookie",
        # A session cookie is a credential: Cookie: / Set-Cookie: sessionid=..., PHPSESSID=..., remember_me=...
        r"(?:(?i:cookie:)[ \t]{0,4}|(?i:cookie)\"[ \t]{0,4}:[ \t]{0,4}\"|;[ \t]{1,4})"  # "cookie": "..." in JSON logs
        r"(?i:[a-z0-9_.-]{0,32}(?:sess|sid|remember)[a-z0-9_.-]{0,32})="
        r"(?P<v>[^;\s\"']{1,256})",
        check="generated",
    ),
    Detector(
        "env_word",
        # NAME and value as words: a Dockerfile's ENV NAME value, fish's set -gx NAME value, csh's setenv NAME value
        _ENV_WORD_HEAD + rf"(?P<name>{_NAME})[ \t]{{1,4}}(?P<v>[^\s\"'=][^\n]{{0,255}})",
        check="env_string",
        finder=_ENV_WORD_HEAD + rf"{_FINDER_NAME}[ \t]{{1,4}}[^\s\"'=]",
    ),
    Detector(
        # docker / podman / helm registry login -p PASSWORD (the long --password is a flag_value), sshpass -p PW
        "password",
        r"(?i:\b(?:login|sshpass)\b)[^\n]{0,128}?\s-p[ \t]{0,4}"
        r"(?P<v>" + QUOTED + r"|[^\s\"'-][^\s\"']{0,255})",
        # a port is no password ("ssh login@host -p 2222", "psql -U login -p 5432"); a rejection is remembered
        # only on a span holding the value (candidates.run_pass), never on this short finder's
        check="not_placeholder",
        finder=r"(?i:\b(?:login|sshpass)\b)[^\n]{0,128}?\s-p[ \t]{0,4}[^\s-]",
    ),
    Detector(
        "sensitive_value",
        # terraform output -json prints a sensitive output in clear: {"sensitive": true, "type": ..., "value": ...}
        r"\"sensitive\"[ \t]{0,4}:[ \t]{0,4}true,\s{0,64}\"type\"[ \t]{0,4}:[ \t]{0,4}\"[a-z]{1,16}\",\s{0,64}"
        r"\"value\"[ \t]{0,4}:[ \t]{0,4}(?P<v>\"[^\"\n]{1,256}\"?|[^\s,}\]\[{\"][^\s,}\]]{0,255})",
        # no check: every such value is one the operator marked sensitive (and so the short finder is safe:
        # nothing is rejected, so nothing is memoized on a span that does not hold the value)
        finder=r"\"sensitive\"[ \t]{0,4}:[ \t]{0,4}true,\s{0,64}\"type\"[ \t]{0,4}:[ \t]{0,4}\"[a-z]{1,16}\",\s{0,64}"
        r"\"value\"[ \t]{0,4}:[ \t]{0,4}[^\s,}\]\[{]",
    ),
    Detector(
        "password_hash",
        # htpasswd and shadow lines: user:$apr1$..., user:$2y$..., user:{SHA}...
        r"(?m:^)[A-Za-z0-9_.@-]{1,64}:(?P<v>\$(?:apr1|2[abxy]|1|5|6|y|7|argon2id|argon2i|argon2d)\$[^\s:]{8,300}"
        r"|\{S?SHA\}[A-Za-z0-9+/=]{20,100})",
        # The user unbounded in the scan, as .pgpass's first field below (the count to 64 from every line's start
        # multiplied the DFA states of the pass's other line-start counters on base64 in lines); the finder bounds it.
        search=r"(?m:^)[A-Za-z0-9_.@-]+:(?:\$(?:apr1|2[abxy]|1|5|6|y|7|argon2id|argon2i|argon2d)\$[^\s:]{8}"
        r"|\{S?SHA\}[A-Za-z0-9+/=]{20})",
    ),
    Detector(
        "password",
        # .pgpass lines: hostname:port:database:username:password, where "\\" escapes a ":" or "\\" in a field
        # (an IPv6 host: ``\\:\\:1:5432:*:replicator:PW``)
        rf"(?m:^)(?:[^\s:#\\]|{_ESCAPED}){{1,253}}:(?:\d{{1,5}}|\*):{_PGPASS_FIELD}:{_PGPASS_FIELD}:"
        r"(?P<v>[^\s]{1,256})(?m:$)",
        # The first field unbounded in the scan: a count to 253 from every line's start (and the text's) kept
        # alive beside every other detector's threads made RE2 build new DFA states at the start of every text it
        # had not seen (random base64 at 8 KiB: 5 MB/s). Linear still: the field starts only at a line's start, so
        # each line holds at most one such thread, and the anchored finder bounds it at each hit.
        search=rf"(?m:^)(?:[^\s:#\\]|{_ESCAPED})+:(?:\d{{1,5}}|\*):{_PGPASS_FIELD}:{_PGPASS_FIELD}:[^\s]",
    ),
)

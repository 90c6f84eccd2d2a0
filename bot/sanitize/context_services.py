"""The second pass's detectors for a service's own spelling of a secret in its configuration, its wire protocol or
its client's output: an nginx/Apache header set in clear, HAProxy's ``stats auth``, wpa_supplicant's ``psk``,
redis-cli's ``CONFIG GET requirepass`` reply, LDIF's base64 ``userPassword::``, FTP's ``PASS`` and SMTP's
``AUTH PLAIN`` in a trace, PowerShell's ``ConvertTo-SecureString "PW"``, Ruby's ``:password=>"PW"``, Spring
actuator's ``"x.password":{"value":"PW"}``, a percent-encoded query parameter inside another URL's parameter, and
``heroku config``'s ``NAME:`` then an aligned column. ``context_detectors.CONTEXT`` places them after
``context_tools.TOOL_FORMATS``; every repetition is bounded for the reason given in ``detectors.py`` (the one
unbounded run is explained where it is), and the rarer ones are apart, searched only in text holding their
literal.
"""

from __future__ import annotations

from bot.sanitize.context_patterns import (
    _BARE_VALUE,
    _FINDER_NAME,
    _NAME,
    _QUOTED_VALUE,
    ALIGNED_BLANK,
    DOUBLE_QUOTED,
    QUOTED,
    SINGLE_QUOTED,
    _candidate_start,
)
from bot.sanitize.detectors import Detector

# The detectors below but the last are rare and keep their literal (what every match holds), but none is gated by it:
# they share one automaton (``Detector.group``), scanned over every text the pass searches. Gated apart, each literal
# was a search of the whole text, and ordinary logs hold many of them ("header", "::", "%", '"value"', aligned
# columns): a dozen searches of each text, where one scan of them all costs about as much as the dearest few, and
# text holding a literal ran one more scan per detector, not one for all. None has a ``search``: a scan mixing
# detectors with and without one verifies each hit with a second, anchored match (``automata.Automaton.searcher``),
# which made a candidate on every line cost two RE2 calls instead of one; LDIF's and FTP's finders end at their
# value's first characters instead (their candidates are accepted whatever they hold, so the span serves no memo).
# Ruby's ``:NAME=>`` stays apart, gated by "=>": its name counter starts after every ":", which in the shared
# automaton multiplied the others' DFA states on text dense in ":" (random base64 with ":@._-": 0.5 ms per 64 KiB
# of its own).
_RARE = "services"
_QUOTED_OR_WORD = QUOTED + r"|[^\s\"';][^\s\"';]{0,255}"
# A name whose last word is "pw" (``DB_PW``, ``smtp-pw``), and any name of a secret (``_NAME``) or such a one.
_PW_NAME = r"[A-Za-z0-9_.-]{0,40}[_.-](?i:pw)"
_ANY_SECRET_NAME = rf"{_NAME}|{_PW_NAME}"
# A quoted string literal to its closing quote, an escaped quote inside it read past (JSON, Ruby, JavaScript).
_IN_DOUBLE, _IN_SINGLE = r"(?:[^\"\\\n]|\\.)", r"(?:[^'\\\n]|\\.)"
# (a longer one by its first 256 characters, as ``context_patterns.QUOTED`` reads it)
_QUOTED_STRING = (
    rf"\"{_IN_DOUBLE}{{1,255}}\"|\"{_IN_DOUBLE}{{256}}|'{_IN_SINGLE}{{1,255}}'|'{_IN_SINGLE}{{256}}"
)
# A YAML value to its line's end (a bare one may hold ",", ";", "}"), its trailing blanks left out.
_LINE_VALUE = (
    rf"\"{_IN_DOUBLE}{{1,255}}\"|\"{_IN_DOUBLE}{{256}}|{SINGLE_QUOTED}|[^\s\"'#](?:[^\n]{{0,254}}[^\s])?"
)

# A header set in a web server's configuration: nginx's proxy_set_header / add_header / grpc_set_header /
# more_set_headers, Apache's RequestHeader set; the header's name must name a secret (X-Api-Key, X-Auth-Token).
_SET_HEADER_HEAD = (
    r"\b(?:proxy_set_header|grpc_set_header|add_header|more_set_(?:input_)?headers|(?i:requestheader)"
    r"[ \t]{1,4}(?i:set|append|add))[ \t]{1,8}[\"']?"
)
# heroku config's "NAME:" then blanks to the column its longest name sets (five or more; fewer are the assignment's)
_COLON_ALIGNED_HEAD = rf"(?:^|\n)[ \t]{{0,16}}(?P<name>{_NAME})(?P<sep>:){ALIGNED_BLANK}{{5,}}"
_COLUMN_START = _candidate_start(r"[^\s\"',;&}\])<]")
# One character of a percent-encoded value, never an encoded "&" ("%26") nor an encoded "%" ("%25": "%2526" is
# a twice-encoded "&"): where the parameter ends.
_ENCODED_CHARACTER = r"(?:[A-Za-z0-9._~+-]|%(?:2[0-47-9A-Fa-f]|[013-9A-Fa-f][0-9A-Fa-f]))"

SERVICE_FORMATS: tuple[Detector, ...] = (
    Detector(
        # proxy_set_header X-Api-Key "PW"; (a variable, ``$http_x_api_key``, is no secret)
        "header",
        _SET_HEADER_HEAD + rf"(?P<name>{_NAME})[\"']?[ \t]{{1,8}}(?P<v>{_QUOTED_OR_WORD})",
        check="not_reference",
        finder=_SET_HEADER_HEAD + rf"{_FINDER_NAME}[\"']?[ \t]{{1,8}}[^\s;]",
        own_automaton=True,
        group=_RARE,
        literals=(b"eader",),
    ),
    Detector(
        # HAProxy: stats auth USER:PW
        "password",
        r"\bstats[ \t]{1,8}auth[ \t]{1,8}[^\s:]{1,64}:(?P<v>[^\s]{1,256})",
        finder=r"\bstats[ \t]{1,8}auth[ \t]{1,8}[^\s:]{1,64}:[^\s]",
        own_automaton=True,
        group=_RARE,
        literals=(b"stats",),
    ),
    Detector(
        # HAProxy's userlist: user NAME insecure-password PW (``password <crypt>`` is the crypt token's); from the
        # keyword on, no count alive after every "user"
        "password",
        r"\binsecure-password[ \t]{1,8}(?P<v>[^\s]{1,256})",
        finder=r"\binsecure-password[ \t]{1,8}[^\s]",
        own_automaton=True,
        group=_RARE,
        literals=(b"insecure-password",),
    ),
    Detector(
        # sssd.conf's ldap_default_authtok = PW (sssd's word for the bind password; ``_authtok_type`` names its type)
        "password",
        r"_authtok[ \t]{0,8}=[ \t]{0,8}(?P<v>[^\s](?:[^\n]{0,254}[^\s])?)",
        check="not_placeholder",
        own_automaton=True,
        group=_RARE,
        literals=(b"_authtok",),
    ),
    Detector(
        # MySQL's SET PASSWORD [FOR 'u'@'h'] = 'PW' (or = PASSWORD('PW')) as a general or audit log records it
        "password",
        r"(?i:set)[ \t]{1,4}(?i:password)(?:[ \t]{1,4}(?i:for)[ \t]{1,4}[^=\n]{1,128}?)?[ \t]{0,4}=[ \t]{0,4}"
        r"(?:(?i:password)\([ \t]{0,4})?(?P<v>" + QUOTED + r")",
        own_automaton=True,
        group=_RARE,
        literals=(b"=",),
    ),
    Detector(
        # envoy's config dump (/config_dump?include_eds): a generic secret's inline_string (or inline_bytes)
        "secret",
        r"\"generic_secret\"[ \t]{0,4}:[ \t]{0,4}\{\s{0,64}\"secret\"[ \t]{0,4}:[ \t]{0,4}\{\s{0,64}"
        r"\"inline_(?:string|bytes)\"[ \t]{0,4}:[ \t]{0,4}(?P<v>" + DOUBLE_QUOTED + r")",
        own_automaton=True,
        group=_RARE,
        literals=(b"generic_secret",),
    ),
    Detector(
        # RabbitMQ's Erlang cookie (a chart's NOTES: "ErLang Cookie : X", RABBITMQ_ERLANG_COOKIE=X): whoever
        # holds it joins the cluster and runs code on its nodes. A shell's ``$(kubectl get secret ...)`` is none, nor
        # a word that more words follow (prose: "erlang cookie: see the clustering guide").
        "secret",
        r"(?i:erlang)[ _.-]?(?i:cookie)[\"']?[ \t]{0,16}[:=][ \t]{0,16}[\"']?(?P<v>[^\s\"'\x24][^\s\"']{0,255})"
        r"(?:[\"']|[ \t]{0,16}(?m:$))",
        check="not_reference",
        own_automaton=True,
        group=_RARE,
        literals=(),  # (none that every letter case holds; in the group a literal gates nothing anyway)
    ),
    Detector(
        # wpa_supplicant.conf's psk="passphrase" or psk=<64 hex> (wpa_passphrase prints both, the first as #psk=)
        "password",
        r"(?m:^)[ \t]{0,16}#?psk=(?P<v>" + DOUBLE_QUOTED + r"|[0-9A-Fa-f]{64})",
        own_automaton=True,
        group=_RARE,
        literals=(b"psk=",),
    ),
    Detector(
        # redis-cli's reply to CONFIG GET requirepass (or masterauth): 1) "requirepass" / 2) "PW", and any pair of
        # a longer reply (CONFIG GET *pass*: 3) "requirepass" / 4) "PW"; numbers padded to their column past 9)
        "password",
        r"(?m:^)[ ]{0,3}[0-9]{1,4}\) \"(?:requirepass|masterauth)\"\r?\n[ ]{0,3}[0-9]{1,4}\) "
        r"(?P<v>" + DOUBLE_QUOTED + r")",
        own_automaton=True,
        group=_RARE,
        literals=(b') "',),
    ),
    Detector(
        # redis's ACL rules (ACL LIST, ACL GETUSER, users.acl, ACL SETUSER echoed): ">PW" adds a cleartext
        # password to the user ("#<sha256>" is its hash, "nopass" none); the first one on the rule is hidden
        "password",
        # (not a shell's redirection: ``sudo -u user id >/dev/null``, ``>&2``, ``>>log``, ``>$LOG``)
        r"(?:^|[\s\"])user [^\s\"]{1,64}(?: [^\s\">]{1,64}){0,8} >(?P<v>[^\s\"/&>\x24][^\s\"]{0,255})",
        finder=r"(?:^|[\s\"])user [^\s\"]{1,64}(?: [^\s\">]{1,64}){0,8} >[^\s\"/&>\x24]",  # (short, as LDIF's)
        own_automaton=True,
        group=_RARE,
        literals=(b" >",),
    ),
    Detector(
        # LDIF's base64 value of a password attribute (ldapsearch, slapcat): userPassword:: e1NTSEF9...
        "password",
        r"(?m:^)(?i:userPassword|unicodePwd)::[ \t]{0,4}(?P<v>[A-Za-z0-9+/=]{4,256})",
        # (a short finder, no ``search``: see _RARE; accepted whatever it holds, so no verdict memo needs the span)
        finder=r"(?m:^)(?i:userPassword|unicodePwd)::[ \t]{0,4}[A-Za-z0-9+/=]{4}",
        own_automaton=True,
        group=_RARE,
        literals=(b"::",),
    ),
    Detector(
        # FTP's PASS command in a packet trace (tcpdump's "FTP: PASS PW") or a client's debug ("---> PASS PW")
        "password",
        r"(?:FTP: |(?m:^)-{1,3}> ?)PASS (?P<v>[^\s]{1,256})",
        finder=r"(?:FTP: |(?m:^)-{1,3}> ?)PASS [^\s]",  # (short, as LDIF's)
        own_automaton=True,
        group=_RARE,
        literals=(b"PASS ",),
    ),
    Detector(
        # SMTP's (or IMAP's) AUTH PLAIN with its base64 credentials on the line ("\0user\0password"); the server's
        # "250-AUTH PLAIN LOGIN" lists mechanisms (too short, and not base64's end)
        "password",
        r"\bAUTH[ \t]{1,4}PLAIN[ \t]{1,4}(?P<v>[A-Za-z0-9+/]{12,256}={0,2})(?:[\s\"']|\\r|$)",
        own_automaton=True,
        group=_RARE,
        literals=(b"AUTH PLAIN",),
    ),
    Detector(
        # PowerShell: ConvertTo-SecureString "PW" -AsPlainText (a variable, "$pw", is no secret)
        "password",
        r"(?i:ConvertTo-SecureString)[ \t]{1,4}(?:-String[ \t]{1,4})?(?P<v>" + QUOTED + r")",
        check="not_reference",
        own_automaton=True,
        group=_RARE,
        literals=(b"ecureString",),
    ),
    Detector(
        # PHP's define( 'AUTH_KEY',         '...' ) as wp-config.php aligns its salts (quoted_pair: four blanks)
        "password",
        rf"\bdefine\([ \t]{{0,4}}['\"](?P<name>{_NAME})['\"][ \t]{{0,4}},[ \t]{{0,64}}"
        r"(?P<v>" + QUOTED + r")",
        check="generated",  # a salt is; the sample's 'put your unique phrase here' is not
        finder=rf"\bdefine\([ \t]{{0,4}}['\"]{_FINDER_NAME}['\"][ \t]{{0,4}},[ \t]{{0,64}}['\"][^'\"\n]",
        own_automaton=True,
        group=_RARE,
        literals=(b"define(",),
    ),
    Detector(
        # Spring Boot actuator's /env: "spring.datasource.password":{"value":"PW"}, or pretty-printed (curl | jq,
        # the browser's JSON view), "value" on the line after the "{" with its indentation
        "password",
        rf"\"(?P<name>{_NAME})\"[ \t]{{0,4}}:[ \t]{{0,4}}\{{[ \t]{{0,4}}(?:\r?\n[ \t]{{0,64}})?\"value\""
        r"[ \t]{0,4}:[ \t]{0,4}"
        r"(?P<v>" + DOUBLE_QUOTED + r")",
        check="not_placeholder",
        finder=rf"\"{_FINDER_NAME}\"[ \t]{{0,4}}:[ \t]{{0,4}}\{{[ \t]{{0,4}}(?:\r?\n[ \t]{{0,64}})?\"value\""
        r"[ \t]{0,4}:[ \t]{0,4}"
        r"\"[^\"\n]",
        own_automaton=True,
        group=_RARE,
        literals=(b'"value"',),
    ),
    Detector(
        # A query parameter percent-encoded inside another parameter (a login's ?next=...%26access_token%3D<t>%26,
        # or twice: %2526access_token%253D): only a generated-looking value
        "token",
        rf"%(?:25)?(?:26|3[Ff])(?P<name>{_NAME})%(?:25)?3[Dd](?P<v>{_ENCODED_CHARACTER}{{8,256}})",
        check="generated",
        finder=rf"%(?:25)?(?:26|3[Ff]){_FINDER_NAME}%(?:25)?3[Dd]{_ENCODED_CHARACTER}{{8}}",
        own_automaton=True,
        group=_RARE,
        literals=(b"%",),
    ),
    Detector(
        # heroku config: "SECRET_KEY_BASE:     <value>", the value in the column its longest name sets. The run of
        # blanks is unbounded (as ``context_patterns.ALIGNED_BLANK``'s): it starts only after a name opening its
        # line, so each line holds one such thread.
        "assignment",
        _COLON_ALIGNED_HEAD + rf"(?P<v>{_QUOTED_VALUE}|{_BARE_VALUE})",
        check="aligned",
        # the finder skips what the judgement refuses anyway and kubectl describe prints in such columns: a short
        # number ("3600", "952 bytes"), "<set to the key 'password' in secret ...>", "<none>"
        finder=_COLON_ALIGNED_HEAD.replace(_NAME, _FINDER_NAME) + rf"(?:{_COLUMN_START})",
        own_automaton=True,
        group=_RARE,
        literals=(b":     ",),
    ),
    Detector(
        # A YAML key whose name's last word is "pw" (``DB_PW: x``, ``- smtp_pw: "x"``; ``shapes.name_kind`` reads it
        # as a password's): the assignment detectors' names need a longer word (two letters are everywhere in base64,
        # ``finder_name.py``), so it is read here, at a line's start only. The finder's runs are unbounded (one DFA
        # state each, as the environment line's search) and it ends at the value's first character.
        "password",
        rf"(?:^|\n)[ \t]{{0,16}}(?:-[ \t]{{1,4}})?(?P<name>{_PW_NAME}):[ \t]{{1,8}}(?P<v>{_LINE_VALUE})",
        check="xml_pair",  # the name's rules on the value: ``DB_PW: ${DB_PW}``, ``changeme``, ``3`` stay
        finder=r"(?:^|\n)[ \t]*(?:-[ \t]+)?[A-Za-z0-9_.-]*[_.-](?i:pw):[ \t]+[^\s#]",
        own_automaton=True,
        group=_RARE,
        literals=(b":",),
    ),
    Detector(
        # The same name quoted as a JSON or a Python dict's key, anywhere on a line: ``{"SMTP_PW": "x"}``
        "password",
        rf"[\"'](?P<name>{_PW_NAME})[\"'][ \t]{{0,4}}:[ \t]{{0,4}}(?P<v>{_QUOTED_STRING})",
        check="xml_pair",
        finder=r"[\"'][A-Za-z0-9_.-]*[_.-](?i:pw)[\"'][ \t]*:[ \t]*[\"'][^\"'\n]",
        own_automaton=True,
        group=_RARE,
        literals=(b":",),
    ),
    Detector(
        # Ruby's default for an unset variable, in code grep or cat prints: ENV["DB_PASSWORD"] || "PW" (and ||=)
        "password",
        rf"\bENV\[[ \t]{{0,4}}[\"'](?P<name>{_ANY_SECRET_NAME})[\"'][ \t]{{0,4}}\][ \t]{{0,4}}\|\|=?[ \t]{{0,4}}"
        rf"(?P<v>{_QUOTED_STRING})",
        check="xml_pair",  # ``ENV["PORT"] || "3000"``, ``|| "changeme"``, ``|| ""`` stay
        finder=r"\bENV\[[ \t]*[\"'][A-Za-z0-9_.-]+[\"'][ \t]*\][ \t]*\|\|=?[ \t]*[\"'][^\"'\n]",
        own_automaton=True,
        group=_RARE,
        literals=(b"ENV[",),
    ),
    Detector(
        # JavaScript's: process.env.JWT_SECRET || "PW", process.env["X"] ?? 'PW', a template literal too
        "password",
        rf"\bprocess\.env(?:\.|\[[ \t]{{0,4}}[\"'`])(?P<name>{_ANY_SECRET_NAME})(?:[\"'`][ \t]{{0,4}}\])?[ \t]{{0,4}}"
        rf"(?:\|\||\?\?)[ \t]{{0,4}}(?P<v>{_QUOTED_STRING}|`[^`\n]{{1,256}}`)",
        check="xml_pair",
        finder=r"\bprocess\.env(?:\.|\[[ \t]*[\"'`])[A-Za-z0-9_.-]+(?:[\"'`][ \t]*\])?[ \t]*(?:\|\||\?\?)[ \t]*"
        r"[\"'`][^\"'`\n]",
        own_automaton=True,
        group=_RARE,
        literals=(b"process.env",),
    ),
    Detector(
        # php-fpm's pool configuration: env[DB_PASS] = PW (the variable's name inside the brackets; the pool passes
        # it to every worker's environment). ``env[APP_ENV] = production``, ``env[DB_PASS] = $DB_PASS`` stay.
        "password",
        rf"(?:^|\n)[ \t]{{0,16}}env\[(?P<name>{_ANY_SECRET_NAME})\][ \t]{{0,8}}=[ \t]{{0,8}}(?P<v>{_LINE_VALUE})",
        check="xml_pair",
        finder=r"(?:^|\n)[ \t]*env\[[A-Za-z0-9_.-]+\][ \t]*=[ \t]*[^\s#]",
        own_automaton=True,
        group=_RARE,
        literals=(b"env[",),
    ),
    Detector(
        # Spring's property resolver at DEBUG: Found key 'spring.mail.password' in PropertySource 'x' with value of
        # type String: PW (the value to the line's end; a key that names no secret, or a ${...}, stays)
        "password",
        rf"Found key '(?P<name>{_ANY_SECRET_NAME})' in PropertySource '[^'\n]{{1,128}}' with value of type "
        r"[A-Za-z.]{1,64}: (?P<v>[^\s](?:[^\n]{0,254}[^\s])?)",
        check="xml_pair",
        finder=r"Found key '[A-Za-z0-9_.-]+' in PropertySource '[^'\n]{1,128}' with value of type [A-Za-z.]{1,64}: "
        r"[^\s]",
        own_automaton=True,
        group=_RARE,
        literals=(b"Found key '",),
    ),
    Detector(
        # PagerDuty's Events v2 routing (integration) key: PAGERDUTY_ROUTING_KEY=<32 hex>, "routing_key":"<32 hex>".
        # Only that shape: an AMQP routing key (``routing_key: orders.created``) is a queue's address, no secret.
        "token",
        r"(?i:routing)[_-]?(?i:key)[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?(?P<v>[0-9a-fA-F]{32})(?:[^0-9A-Za-z_-]|$)",
        own_automaton=True,
        group=_RARE,
        literals=(),  # (none that every letter case holds; in the group a literal gates nothing anyway)
    ),
    Detector(
        # Ruby's inspect of a Hash with symbol keys: :password=>"PW"
        "password",
        rf":(?P<name>{_NAME})[ \t]{{0,4}}=>[ \t]{{0,4}}(?P<v>{DOUBLE_QUOTED})",
        check="not_placeholder",
        finder=rf":{_FINDER_NAME}[ \t]{{0,4}}=>[ \t]{{0,4}}\"[^\"\n]",
        own_automaton=True,
        literals=(b"=>",),
    ),
)

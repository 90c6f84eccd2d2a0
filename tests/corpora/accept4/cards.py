"""Model-proposed arguments for approval cards: secrets the model copied into a call, and invisible characters
(format controls, combining marks, fillers, variation selectors, tag characters, bidi) it may have smuggled in.
Each is a command of the opsctl fixture and the JSON arguments the model sent."""

from __future__ import annotations

from dataclasses import dataclass

from tests.corpora.accept4.case import B64, HEX, URLSAFE, b64, rnd


@dataclass(frozen=True)
class CardCase:
    name: str
    command: tuple[str, ...]  # path in the opsctl fixture, e.g. ("db", "query")
    arguments: dict[str, object]
    secrets: tuple[str, ...] = ()
    invisibles: tuple[str, ...] = ()  # raw characters placed in the arguments


def _card(name: str, command: str, arguments: dict[str, object], secrets: tuple[str, ...] = (),
          invisibles: tuple[str, ...] = ()) -> CardCase:
    return CardCase(name, tuple(command.split()), arguments, secrets, invisibles)


_PW = [rnd(f"cardpw{i}", 18) for i in range(12)]
_GH = "ghp" + "_" + rnd("cardgh", 36)
_DIGITS = "0123456789"
_XOXP = "xox" + "p-" + rnd("xoxp1", 11, _DIGITS) + "-" + rnd("xoxp2", 12, _DIGITS) + "-" + rnd("xoxp3", 32, HEX)
_AK = "AKIA" + rnd("cardak", 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
_SK = rnd("cardsk", 40, B64)
_JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9." + rnd("cardjwt", 86, URLSAFE)
_B64PW = b64(rnd("cardb64", 20))

CARDS: list[CardCase] = [
    _card("sql-alter-user-password", "db query",
          {"database": "app", "sql": f"ALTER USER app WITH PASSWORD '{_PW[0]}'"}, (_PW[0],)),
    _card("sql-create-user-identified", "db query",
          {"database": "shop", "sql": f"CREATE USER 'ro'@'%' IDENTIFIED BY '{_PW[1]}'"}, (_PW[1],)),
    _card("sql-insert-token", "db query",
          {"database": "app", "sql": f"INSERT INTO integrations(name, api_token) VALUES ('github', '{_GH}')"}, (_GH,)),
    _card("backup-destination-url-password", "db backup",
          {"database": "orders", "destination": f"sftp://backup:{_PW[2]}@vault-nas.internal/backups/"}, (_PW[2],)),
    _card("backup-destination-s3-keys", "db backup",
          {"database": "orders", "destination": f"s3://acme-backups/?access_key={_AK}&secret_key={_SK}"}, (_AK, _SK)),
    _card("rollout-set-password", "deploy rollout",
          {"service": "api", "version": "1.42.0", "set": [f"db.password={_PW[3]}", "replicas=3"]}, (_PW[3],)),
    _card("rollout-set-token-env", "deploy rollout",
          {"service": "api", "version": "1.42.0", "set": [f"env.SLACK_TOKEN={_XOXP}"]}, (_XOXP,)),
    _card("rollout-set-aws", "deploy rollout",
          {"service": "etl", "version": "2.0.1",
           "set": [f"AWS_ACCESS_KEY_ID={_AK}", f"AWS_SECRET_ACCESS_KEY={_SK}"]}, (_AK, _SK)),
    _card("rollout-set-b64-secret", "deploy rollout",
          {"service": "api", "version": "1.42.0", "set": [f"secret.data.DB_PASSWORD={_B64PW}"]}, (_B64PW,)),
    _card("rollout-notify-webhook", "deploy rollout",
          {"service": "api", "version": "1.42.0",
           "notify": [f"https://hooks.slack.com/services/T0AB12CDE/B0FG34HIJ/{rnd('cardwh', 24)}"]},
          (rnd("cardwh", 24),)),
    _card("rollout-version-with-creds", "deploy rollout",
          {"service": "api", "version": f"https://deploy:{_PW[4]}@git.acme.io/acme/api.git#v1.42.0"}, (_PW[4],)),
    _card("rollback-reason-jwt", "deploy rollback", {"service": "api", "reason": f"token {_JWT} expired"}, (_JWT,)),
    _card("incident-note-pasted-password", "incident note",
          {"id": "INC-4411", "text": f"db creds for the responder: user=app password={_PW[5]}"}, (_PW[5],)),
    _card("incident-note-dsn", "incident note",
          {"id": "INC-4412", "text": f"failing DSN mysql://shop:{_PW[6]}@mysql-1:3306/shop"}, (_PW[6],)),
    _card("user-add-group-token", "auth user add",
          {"username": "svc-ci", "email": "ci@acme.io", "role": "admin",
           "group": [f"token:{'glpat-' + rnd('cardglpat', 20, URLSAFE)}"]},
          ("glpat-" + rnd("cardglpat", 20, URLSAFE),)),
    _card("logs-grep-bearer", "service logs",
          {"service": "api", "grep": f"Authorization: Bearer {_JWT}"}, (_JWT,)),
    _card("backup-label-key", "db backup",
          {"database": "orders", "label": [f"encryption_key={rnd('cardenc', 64, HEX)}"]}, (rnd("cardenc", 64, HEX),)),
    # invisible characters, alone or around a secret
    _card("zero-width-in-service", "service restart", {"service": "web\u200b-1"}, invisibles=("\u200b",)),
    _card("rlo-in-service", "service restart", {"service": "api\u202e1-bew"}, invisibles=("\u202e",)),
    _card("bidi-isolates", "service logs", {"service": "api", "grep": "\u2066error\u2069 \u2067x\u2069"},
          invisibles=("\u2066", "\u2069", "\u2067")),
    _card("hangul-fillers", "auth user delete", {"username": "admin\u3164\u115f\u1160\uffa0"},
          invisibles=("\u3164", "\u115f", "\u1160", "\uffa0")),
    _card("braille-blank", "incident note", {"id": "INC-1", "text": "ok\u2800\u2800done"}, invisibles=("\u2800",)),
    _card("combining-marks", "service restart", {"service": "we\u0301b\u0336\u20dd"},
          invisibles=("\u0301", "\u0336", "\u20dd")),
    _card("variation-selectors", "service restart", {"service": "api\ufe0f\ufe0e\U000e0100"},
          invisibles=("\ufe0f", "\ufe0e", "\U000e0100")),
    _card("tag-characters", "incident note", {"id": "INC-2", "text": "note\U000e0069\U000e0067\U000e006e\U000e007f"},
          invisibles=("\U000e0069", "\U000e0067", "\U000e006e", "\U000e007f")),
    _card("soft-hyphen-wj-bom", "service restart", {"service": "pay\u00adments\u2060\ufeff"},
          invisibles=("\u00ad", "\u2060", "\ufeff")),
    _card("mongolian-vs-and-cgj", "service restart", {"service": "db\u180e\u034f\u17b4"},
          invisibles=("\u180e", "\u034f", "\u17b4")),
    _card("odd-spaces", "service logs", {"service": "api", "grep": "a\u00a0b\u2007c\u3000d\u205fe"},
          invisibles=("\u00a0", "\u2007", "\u3000", "\u205f")),
    _card("line-separators", "incident note", {"id": "INC-3", "text": "a\u2028b\u2029c\u0085d"},
          invisibles=("\u2028", "\u2029", "\u0085")),
    _card("invisible-inside-secret", "db query",
          {"database": "app", "sql": f"ALTER USER app PASSWORD '{_PW[7][:9]}\u200d{_PW[7][9:]}'"},
          (_PW[7][:9], _PW[7][9:]), ("\u200d",)),
    _card("invisible-between-flag-and-secret", "deploy rollout",
          {"service": "api", "version": "1.0", "set": [f"db.password=\u2063{_PW[8]}"]}, (_PW[8],), ("\u2063",)),
    _card("arabic-marks-and-lrm", "service restart", {"service": "api\u200e\u200f\u061c"},
          invisibles=("\u200e", "\u200f", "\u061c")),
    _card("enclosing-keycap-and-hangul-jungseong", "auth user add",
          {"username": "root\u20e3", "email": "a\u1160@acme.io"}, invisibles=("\u20e3", "\u1160")),
]

"""Leaks the third acceptance check left open (``leaks_accept3.OPEN_CASES``) closed by leaks6: a service's own
spelling of a secret (``bot/sanitize/context_services.py``), SQL's role options, cqlsh's ``-p``, an Authorization
header after a "\\n" escape or set in a web server's configuration, botocore's bytes literal of a session token, a
Discord webhook, and a JSON string whose value holds an escaped quote. Each secret is hidden, and the look-alike
lines beside it come out byte-identical."""

from __future__ import annotations

import pytest

from bot.sanitize import sanitize_output

TOKEN = "bRNmWpVxGw5sARiLFaq8MVEFFgs2Lonq"
B64 = "ZXRsOmIuZVhsMHFLTHNjTmZNYiNXNQ=="
SECRETS: dict[str, tuple[str, str]] = {
    "json escaped quote": ('{"smtp":{"username":"alerts","password":"oB2vV8M\\"PT8VcpkS"}}\n', "PT8VcpkS"),
    "json escaped quote, escaped backslash before it": ('{"password":"oB2vV8M\\\\\\"PT8VcpkS\\\\","u":"a"}\n',
                                                         "PT8VcpkS"),
    "double-encoded query": (f"GET /login?next=%2Fx%3Fa%3D1%26access_token%3D{TOKEN}%26page%3D1 HTTP/1.1\n", TOKEN),
    "twice-encoded query": (f"GET /l?next=%252Fx%253Fa%253D1%2526access_token%253D{TOKEN}%2526p%253D1\n", TOKEN),
    "nginx Authorization": (f'        proxy_set_header Authorization "Basic {B64}";\n', B64),
    "http.client debug": (f"send: b'GET / HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Basic {B64}\\r\\n\\r\\n'\n", B64),
    "AUTH PLAIN": ("-> AUTH PLAIN AGFsZXJ0c0BhY21lLmV4YW1wbGUAZCpzTVlBRktrWjQuT3ktNQ==\n", "AGFsZXJ0c0BhY21l"),
    "botocore session token": ("headers={'X-Amz-Security-Token': b'IQoJb3JpZ2luX2VjE" + "Ab3d" * 40 + "'}\n",
                               "Ab3dAb3dAb3d"),
    "nginx X-Api-Key": ('        proxy_set_header X-Api-Key "B7RgnQU2qHfzhw0KkGDTCJoBjLfXKVCe";\n', "B7RgnQU2qHfz"),
    "heroku config": ("DATABASE_URL:        postgres://a@b/c\nSECRET_KEY_BASE:     ecdefa19cb62ea0fd626468\n",
                      "ecdefa19cb62"),
    "ALTER ROLE WITH LOGIN": ("LOG:  statement: ALTER ROLE app WITH LOGIN PASSWORD 'NGXFXcr2=5pa7dK9+^';\n",
                              "NGXFXcr2"),
    "CREATE ROLE options": ("CREATE ROLE app WITH NOSUPERUSER LOGIN ENCRYPTED PASSWORD 'NGXFXcr2=5pa7dK9+^';\n",
                            "NGXFXcr2"),
    "haproxy stats auth": ("    stats auth admin:OU9n%p^ivahuVnCM\n", "OU9n%p"),
    "redis-cli requirepass": ('1) "requirepass"\n2) "+q.Vimhe3x+W1!i#R3!-"\n', "Vimhe3x"),
    "wpa_supplicant psk": ('\tpsk="%7!NQMZAi-5BWYqK"\n', "NQMZAi"),
    "ruby inspect": ('{:host=>"redis-cache", :password=>"ebn!7g05Nw2#1w_T", :db=>0}\n', "7g05Nw2"),
    "spring actuator": ('{"spring.datasource.password":{"value":"RDRg01~%5uwFCwb4W0Ck"}}\n', "5uwFCwb4"),
    "discord webhook": ("https://discord.com/api/webhooks/0123456789012345678/98h7UGfAJTU9EpoDQ8AMoB-ncnbMWvVq1-9IO"
                        "QrL-VCPbQWp0VJEQa0fD5KHjt3dqPmm\n", "98h7UGfAJTU9"),
    "cqlsh -p": ("  512  cqlsh -u cassandra -p x9aIn9b+LgaADsoH 10.0.7.4\n", "x9aIn9b"),
    "ConvertTo-SecureString": ('$pw = ConvertTo-SecureString "8Vb_8mP^#wDq1aY6" -AsPlainText -Force\n', "8mP^#wDq"),
    "FTP PASS": ("18: FTP: PASS TruVTB1#9c6H\n", "TruVTB1"),
    "wp-config salt": ("define( 'AUTH_KEY',         'D,Y:%e.R)*Y$oI{j{O1fWDP@S[+>FIC&Jyt~9q6UAG15>>m4' );\n",
                       "O1fWDP@S"),
    "LDIF userPassword::": ("userPassword:: e1NTSEF9Szlqd2pXZkVFM3RIUTVIcmYwWWtpZEZlRzJvTzBVblM=\n", "e1NTSEF9Szlq"),
}

LOOK_ALIKES = (
    '{"message":"say \\"hi\\" there","user":"alerts"}\n',
    "GET /login?next=%2Fapi%3Fpage%3D2%26sort%3Dname HTTP/1.1\n",
    "GET /login?next=%2Fa%26token%3Dnull%26x%3D1\n",
    "        proxy_set_header Authorization $http_authorization;\n",
    '        proxy_set_header Authorization "";\n',
    'Set the Authorization header "Basic" scheme\n',
    "    proxy_set_header X-Forwarded-Proto $scheme;\n",
    "    proxy_set_header X-Auth-Request-User $upstream_http_x_auth_request_user;\n",
    "<- 250-AUTH PLAIN LOGIN\n<- 250 AUTH PLAIN LOGIN CRAM-MD5 XOAUTH2\n",
    "FTP: USER mirror\n",
    " PASS  src/app.test.js\n--- PASS: TestOrders (0.00s)\nPASS\n",
    "    stats uri /stats\n    stats realm Haproxy\\ Statistics\n    stats refresh 10s\n",
    "\tkey_mgmt=WPA-PSK\n\tproto=RSN\n",
    '1) "maxmemory"\n2) "4294967296"\n1) "requirepass"\n2) ""\n',
    "objectClass:: dG9w\ndescription:: SGVsbG8gd29ybGQ=\n",
    "PS C:\\> $pw = ConvertTo-SecureString $plain -AsPlainText -Force\n",
    '{:password=>"[FILTERED]", :user=>"ops"}\n',
    '"spring.datasource.password":{"value":"******"}\n"spring.datasource.username":{"value":"orders_app"}\n',
    "LOG_LEVEL:           info\nWEB_CONCURRENCY:     4\n",
    "Name:                orders-api\nTokens:              <none>\nMountable secrets:   <none>\n",
    "    Type:                    Secret (a volume populated by a Secret)\n"
    "    SecretName:              orders-db-credentials\n    TokenExpirationSeconds:  3607\n",
    "      DB_PASSWORD:             <set to the key 'password' in secret 'orders-db'>  Optional: false\n"
    "      TOKEN_TTL_SECONDS:       3600\ntoken:     952 bytes\n",
    "ALTER ROLE orders_app WITH LOGIN;\nCREATE ROLE readonly WITH NOLOGIN;\n",
    "  512  cqlsh -u cassandra 10.0.7.4 9042\n",
    "See https://discord.com/api/webhooks for docs\n",
    "define( 'AUTH_KEY',         'put your unique phrase here' );\ndefine( 'WP_DEBUG', false );\n",
    "define( 'NONCE_KEY',        getenv('WP_NONCE_KEY') );\n",
)


@pytest.mark.parametrize("name", list(SECRETS))
def test_the_secret_is_hidden(name: str) -> None:
    text, secret = SECRETS[name]
    out = sanitize_output(text.encode()).text
    assert secret not in out and "[REDACTED:" in out, out


def test_an_escaped_quote_does_not_end_the_value_and_the_next_pair_stays() -> None:
    out = sanitize_output(b'{"password":"oB2vV8M\\"PT8VcpkS","user":"alerts"}\n').text
    assert out == '{"password":"[REDACTED:password]","user":"alerts"}\n'
    # an escaped backslash before the quote: the quote is the string's end
    out = sanitize_output(b'{"password":"oB2vV8Mx9\\\\","user":"PT8VcpkSab"}\n').text
    assert out == '{"password":"[REDACTED:password]","user":"PT8VcpkSab"}\n'


def test_the_escapes_after_the_header_value_stay() -> None:
    out = sanitize_output(f"b'Authorization: Basic {B64}\\r\\nConnection: keep-alive\\r\\n'".encode()).text
    assert out.endswith("\\r\\nConnection: keep-alive\\r\\n'") and B64 not in out


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_a_look_alike_comes_out_whole(text: str) -> None:
    assert sanitize_output(text.encode()).text == text

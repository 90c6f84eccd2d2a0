# ruff: noqa: E501  (output lines as tools print them; splitting them would change their shape)
"""Secret-bearing output of configuration tools, containers, hosts, databases and web servers."""

from __future__ import annotations

from tests.corpora.accept4.case import B64, HEX, URLSAFE, Case, b64, case, rnd

SERVICES: list[Case] = [
    case("ansible-debug-var", "ansible", """TASK [debug] *******************************************************************
ok: [db-1.prod] => {
    "db_password": "<<pw>>"
}
""", pw=rnd("ansdbg", 20)),
    case("ansible-vault-view", "ansible", """$ ansible-vault view group_vars/prod/vault.yml
vault_mysql_root_password: <<pw>>
vault_api_token: <<tok>>
vault_smtp_user: alerts@acme.io
""", pw=rnd("ansvault", 18), tok=rnd("ansapi", 40, HEX)),
    case("ansible-inventory", "ansible", """[windows]
win-01.corp ansible_host=10.2.0.11

[windows:vars]
ansible_user=Administrator
ansible_password=<<pw>>
ansible_connection=winrm
ansible_become_pass=<<bp>>
""", pw=rnd("anspw", 14) + "#1", bp=rnd("ansbp", 14)),
    case("ansible-vvv-module-args", "ansible", """changed: [app-3] => {"changed": true, "invocation": {"module_args": {"login_host": "localhost", "login_password": "<<pw>>", "login_user": "root", "name": "shop", "password": "<<pw2>>", "priv": "shop.*:ALL", "state": "present"}}, "user": "shop"}
""", pw=rnd("ansvvv", 16), pw2=rnd("ansvvv2", 16)),
    case("docker-inspect-env", "container environment", """        "Env": [
            "POSTGRES_PASSWORD=<<pw>>",
            "POSTGRES_USER=app",
            "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "GOSU_VERSION=1.17",
            "PGDATA=/var/lib/postgresql/data"
        ],
""", pw=rnd("dockenv", 20)),
    case("docker-config-auths", "docker config", """$ cat ~/.docker/config.json
{
	"auths": {
		"ghcr.io": {
			"auth": "<<a1>>"
		},
		"https://index.docker.io/v1/": {
			"auth": "<<a2>>"
		}
	},
	"credsStore": ""
}
""", a1=b64("acme-bot:" + "ghp" + "_" + rnd("ghcr", 36)), a2=b64("acmeops:" + rnd("dhpw", 16))),
    case("docker-login-ci", "command line in CI log", """$ docker login -u gitlab-ci-token -p <<pw>> registry.gitlab.com
WARNING! Using --password via the CLI is insecure. Use --password-stdin.
Login Succeeded
""", pw="glcbt-" + rnd("glcbt", 20, URLSAFE)),
    case("docker-compose-config", "compose environment", """services:
  db:
    environment:
      MYSQL_DATABASE: wordpress
      MYSQL_PASSWORD: <<pw>>
      MYSQL_ROOT_PASSWORD: <<root>>
      MYSQL_USER: wordpress
    image: mysql:8.0
""", pw=rnd("compose1", 16), root=rnd("compose2", 16)),
    case("docker-history-env", "image history", """IMAGE          CREATED       CREATED BY                                      SIZE      COMMENT
5f1c2b3a4d6e   2 weeks ago   /bin/sh -c #(nop)  ENV NPM_TOKEN=<<tok>>   0B
<missing>      2 weeks ago   /bin/sh -c #(nop) WORKDIR /app                  0B
""", tok="npm" + "_" + rnd("npmtok", 36)),
    case("docker-build-arg", "build log", """#7 [build 3/6] RUN --mount=type=cache,target=/root/.npm npm ci
#7 0.412 npm warn config //registry.npmjs.org/:_authToken=<<tok>> is set in the environment
#7 DONE 14.2s
""", tok="npm" + "_" + rnd("npmtok2", 36)),
    case("podman-secret-inspect", "container secret", """[
    {
        "ID": "8f5a1d0d0c3e1b2a3c4d5e6f7",
        "CreatedAt": "2026-12-01T10:00:00.000000000Z",
        "Spec": {
            "Name": "db_root",
            "Driver": {
                "Name": "file"
            }
        },
        "SecretData": "<<v>>"
    }
]
""", v=rnd("podsec", 24)),
    case("podman-auth-json", "docker config", """$ cat ${XDG_RUNTIME_DIR}/containers/auth.json
{
	"auths": {
		"quay.io": {
			"auth": "<<a>>"
		}
	}
}
""", a=b64("acme+robot:" + rnd("quayrobot", 64, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"))),
    case("podman-inspect-env", "container environment", """          "Env": [
               "container=podman",
               "RABBITMQ_DEFAULT_PASS=<<pw>>",
               "HOME=/var/lib/rabbitmq"
          ],
""", pw=rnd("rmqdef", 20)),
    case("systemctl-show-env", "systemd environment", """$ systemctl show -p Environment billing-worker
Environment=RUST_LOG=info DATABASE_URL=postgres://billing:<<pw>>@10.4.0.12/billing STRIPE_SECRET_KEY=<<sk>>
""", pw=rnd("sysshow", 18), sk="sk_" + "live_" + rnd("stripe2", 99)),
    case("systemctl-cat", "systemd unit", """# /etc/systemd/system/backup.service
[Unit]
Description=Nightly backup

[Service]
Type=oneshot
Environment="AWS_ACCESS_KEY_ID=<<ak>>"
Environment="AWS_SECRET_ACCESS_KEY=<<sk>>"
Environment="RESTIC_PASSWORD=<<rp>>"
ExecStart=/usr/local/bin/restic backup /srv
""", ak="AKIA" + rnd("sysak", 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"), sk=rnd("syssk", 40, B64), rp=rnd("restic", 32)),
    case("journal-sudo-mysql", "command line in log", """Dec 02 04:12:01 db-2 sudo[381234]:   oncall : TTY=pts/1 ; PWD=/home/oncall ; USER=root ; COMMAND=/usr/bin/mysql -uroot -p<<pw>> -e SHOW PROCESSLIST
Dec 02 04:12:01 db-2 sudo[381234]: pam_unix(sudo:session): session opened for user root(uid=0) by oncall(uid=1001)
""", pw=rnd("sudomysql", 14)),
    case("journal-app-dsn", "url password", """Dec 02 04:13:44 api-1 gunicorn[2211]: [2026-12-02 04:13:44 +0000] [2211] [ERROR] could not connect to amqp://orders:<<pw>>@rabbit-1.internal:5672/orders: [Errno 111] Connection refused
""", pw=rnd("amqp1", 20)),
    case("journal-curl-u", "command line in log", """Dec 02 04:14:02 cron-1 CRON[99812]: (root) CMD (curl -fsS -u backup:<<pw>> https://nexus.internal/repository/backups/ -T /var/backups/db.tgz)
""", pw=rnd("cronpw", 16)),
    case("journal-ps-password-flag", "command line in log", """Dec 02 04:15:10 etl-1 etl.sh[771]: + pg_dump --dbname=postgresql://etl:<<pw>>@warehouse:5432/dw -Fc -f /tmp/dw.dump
""", pw=rnd("etlpw", 18)),
    case("psql-select-tokens", "database rows", """$ psql -c 'select id, name, api_token from integrations limit 3'
 id |   name    |                api_token
----+-----------+------------------------------------------
  1 | pagerduty | <<t1>>
  2 | github    | <<t2>>
  3 | opsgenie  | <<t3>>
(3 rows)
""", t1=rnd("pdkey", 32, HEX), t2="ghp" + "_" + rnd("ghp2", 36), t3=rnd("ogkey", 8, HEX) + "-" + rnd("og2", 4, HEX) + "-" + rnd("og3", 4, HEX) + "-" + rnd("og4", 4, HEX) + "-" + rnd("og5", 12, HEX)),
    case("pgpass", "pgpass", """$ cat ~/.pgpass
db-primary.internal:5432:*:replicator:<<pw>>
*:*:analytics:analyst:<<pw2>>
""", pw=rnd("pgpass1", 20), pw2=rnd("pgpass2", 14)),
    case("postgres-log-alter-role", "sql password", """2026-12-02 04:16:21.112 UTC [44120] postgres@app LOG:  statement: ALTER ROLE app_rw WITH LOGIN PASSWORD '<<pw>>';
""", pw=rnd("pgalter", 20)),
    case("pg-stat-activity-create-user", "sql password", """  pid  | usename  |                         query
-------+----------+--------------------------------------------------------
 51234 | postgres | CREATE USER reporting WITH PASSWORD '<<pw>>' VALID UNTIL '2027-01-01'
(1 row)
""", pw=rnd("pgcreate", 16)),
    case("mysql-ps-aux", "command line", """$ ps aux | grep mysql
root     31337  0.0  0.1  12345  6789 ?        S    04:10   0:00 mysqldump -h db-3 -u backup --password=<<pw>> --all-databases
mysql     1102  2.1 12.3 2345678 987654 ?      Ssl  Nov30  91:12 /usr/sbin/mysqld
""", pw=rnd("mysqldump", 16)),
    case("my-cnf", "ini password", """$ cat /root/.my.cnf
[client]
user=root
password="<<pw>>"

[mysqldump]
password=<<pw2>>
""", pw=rnd("mycnf", 18), pw2=rnd("mycnf2", 18)),
    case("mysql-user-hashes", "password hash", """+------------------+-----------+-------------------------------------------+
| user             | host      | authentication_string                     |
+------------------+-----------+-------------------------------------------+
| app              | %         | *<<h1>> |
| repl             | 10.0.%    | *<<h2>> |
+------------------+-----------+-------------------------------------------+
""", h1=rnd("myh1", 40, "0123456789ABCDEF"), h2=rnd("myh2", 40, "0123456789ABCDEF")),
    case("mysql-general-log-set-password", "sql password", """2026-12-02T04:17:00.123456Z	   88 Query	SET PASSWORD FOR 'shop'@'%' = '<<pw>>'
2026-12-02T04:17:00.223456Z	   88 Query	FLUSH PRIVILEGES
""", pw=rnd("mysqlset", 16)),
    case("go-mysql-dsn", "go mysql dsn", """2026/12/02 04:18:02 main.go:44: opening database shop:<<pw>>@tcp(mysql-primary.db.svc:3306)/shop?parseTime=true&tls=preferred
""", pw=rnd("gomysql", 18)),
    case("mongo-srv-uri", "url password", """{"t":{"$date":"2026-12-02T04:19:00.000+00:00"},"s":"E","c":"app","msg":"connect failed","attr":{"uri":"mongodb+srv://svc-orders:<<pw>>@cluster0.ab1cd.mongodb.net/orders?retryWrites=true&w=majority"}}
""", pw=rnd("mongosrv", 24)),
    case("mongo-keyfile", "printed key", """$ sudo cat /etc/mongod/keyfile
<<k>>
""", k=rnd("mongokf", 756, B64)),
    case("mongo-initdb-env", "container environment", """MONGO_INITDB_ROOT_USERNAME=root
MONGO_INITDB_ROOT_PASSWORD=<<pw>>
""", pw=rnd("mongoinit", 20)),
    case("redis-config-get", "redis password", """$ redis-cli -h cache-1 CONFIG GET requirepass
1) "requirepass"
2) "<<pw>>"
""", pw=rnd("redisreq", 32)),
    case("redis-conf", "redis password", """# Require clients to issue AUTH <PASSWORD> before processing any other commands.
requirepass <<pw>>
masterauth <<pw2>>
maxmemory 4gb
""", pw=rnd("redisconf", 24), pw2=rnd("redisconf2", 24)),
    case("redis-cli-a", "command line", """$ redis-cli -h 10.0.3.4 -a <<pw>> INFO replication
Warning: Using a password with '-a' or '-u' option on the command line interface may not be safe.
# Replication
role:master
connected_slaves:2
""", pw=rnd("rediscli", 20)),
    case("redis-acl-setuser", "redis password", """$ redis-cli ACL SETUSER worker on ><<pw>> ~jobs:* +@all
OK
""", pw=rnd("redisacl", 20)),
    case("redis-url", "url password", """celery@worker-1 v5.4.0 (opalescent)
- ** ---------- .> transport:   rediss://default:<<pw>>@redis-prod.abc123.ng.0001.euw1.cache.amazonaws.com:6379/0
- ** ---------- .> results:     disabled://
""", pw=rnd("redisurl", 32)),
    case("ldapsearch-w", "command line", """$ ldapsearch -x -H ldaps://ldap.corp -D "cn=admin,dc=corp,dc=acme" -w <<pw>> -b "ou=people,dc=corp,dc=acme" "(uid=jdoe)" mail
# extended LDIF
dn: uid=jdoe,ou=people,dc=corp,dc=acme
mail: jdoe@acme.io
""", pw=rnd("ldapw", 14)),
    case("ldif-userpassword", "ldap password", """dn: uid=svc-jenkins,ou=services,dc=corp,dc=acme
objectClass: inetOrgPerson
uid: svc-jenkins
userPassword:: <<pw>>
""", pw=b64("{SSHA}" + rnd("ssha", 32, B64))),
    case("sssd-authtok", "ini password", """[domain/corp.acme]
id_provider = ldap
ldap_uri = ldaps://ldap.corp
ldap_default_bind_dn = cn=sssd,ou=services,dc=corp,dc=acme
ldap_default_authtok = <<pw>>
""", pw=rnd("sssd", 18)),
    case("slapd-rootpw", "ldap password", """olcRootDN: cn=admin,dc=corp,dc=acme
olcRootPW: {SSHA}<<h>>
""", h=rnd("olcroot", 32, B64)),
    case("nginx-basic-header", "basic auth", """$ nginx -T 2>/dev/null | grep -A3 'location /upstream'
    location /upstream/ {
        proxy_pass https://legacy.internal/;
        proxy_set_header Authorization "Basic <<b>>";
    }
""", b=b64("legacy:" + rnd("legacy", 16))),
    case("nginx-access-query-token", "url query token", """10.0.0.5 - - [02/Dec/2026:04:20:01 +0000] "GET /api/v1/export?format=csv&access_token=<<tok>> HTTP/1.1" 200 18234 "-" "python-requests/2.32.3"
10.0.0.6 - - [02/Dec/2026:04:20:02 +0000] "GET /hooks/deploy?api_key=<<key>>&ref=main HTTP/1.1" 204 0 "-" "curl/8.5.0"
""", tok=rnd("qtok", 40, URLSAFE), key=rnd("qkey", 32, HEX)),
    case("htpasswd", "password hash", """$ cat /etc/nginx/.htpasswd
admin:$apr1$<<s>>$<<h>>
deploy:$2y$10$<<bh>>
""", s=rnd("aprs", 8, "abcdefghijklmnopqrstuvwxyz0123456789./"), h=rnd("aprh", 22, ALNUMDOT := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789./"), bh=rnd("bcrypt", 53, ALNUMDOT)),
    case("haproxy-stats-auth", "basic auth", """listen stats
    bind *:8404
    stats enable
    stats uri /stats
    stats auth admin:<<pw>>

userlist ops
    user oncall insecure-password <<pw2>>
""", pw=rnd("hastats", 16), pw2=rnd("haul", 14)),
    case("envoy-config-dump-key", "private key", """          "tls_certificate": {
            "certificate_chain": {
              "filename": "/etc/envoy/certs/tls.crt"
            },
            "private_key": {
              "inline_string": "-----BEGIN EC PRIVATE KEY-----\\nMHcCAQEEI<<k1>>\\n<<k2>>\\n-----END EC PRIVATE KEY-----\\n"
            }
          }
""", k1=rnd("envk1", 55, B64), k2=rnd("envk2", 64, B64)),
    case("envoy-access-log-header", "api key header", """[2026-12-02T04:21:07.412Z] "POST /v2/charge HTTP/2" 200 - 512 91 34 33 "10.8.1.4" "Go-http-client/2.0" "7c1e0f2a-1b2c-4d5e-8f90-a1b2c3d4e5f6" "payments.internal" "10.8.3.9:8443" x-api-key=<<k>>
""", k=rnd("envkey", 40)),
    case("envoy-generic-secret", "secret manager value", """    "generic_secret": {
     "secret": {
      "inline_string": "<<s>>"
     }
    }
""", s=rnd("envgen", 32)),
]

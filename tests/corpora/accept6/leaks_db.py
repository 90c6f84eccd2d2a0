# ruff: noqa: E501
"""Databases: connection strings, psql/mysql output, redis-cli, mongo, and their clients' config files."""

from __future__ import annotations

import base64
import hashlib

from tests.corpora.accept6.values import (
    ALNUM,
    Family,
    Secret,
    b64,
    hexs,
    human_password,
    password,
    pick,
)


def scram(rs) -> str:  # type: ignore[no-untyped-def]
    return f"SCRAM-SHA-256$4096:{b64(rs, 16)}${b64(rs, 32)}:{b64(rs, 32)}"


def build() -> Family:
    F = Family("db")

    rs = F.rng("psql-url-echo")
    pw = password(rs, 20)
    F.add("psql-url-echo", f"""$ psql "postgresql://analytics:{pw}@pg-analytics.acme.internal:5432/warehouse?sslmode=require" -c '\\dt'
             List of relations
 Schema |      Name      | Type  |   Owner
--------+----------------+-------+-----------
 public | daily_revenue  | table | analytics
 public | events_2026_12 | table | analytics
(2 rows)
""", Secret("url-password", pw))

    rs = F.rng("pg-shadow")
    h1, h2 = scram(rs), scram(rs)
    F.add("pg-shadow", f"""postgres=# SELECT usename, passwd FROM pg_shadow ORDER BY 1;
  usename  |                                                                passwd
-----------+---------------------------------------------------------------------------------------------------------------------------------------
 app       | {h1}
 postgres  | {h2}
 replicator|
(3 rows)
""", Secret("scram", h1.split("$", 2)[2]), Secret("scram", h2.split("$", 2)[2]))

    rs = F.rng("mysql-user-hashes")
    h = "*" + hexs(rs, 40).upper()
    F.add("mysql-user-hashes", f"""mysql> SELECT user, host, authentication_string FROM mysql.user WHERE user = 'shop';
+------+------+-------------------------------------------+
| user | host | authentication_string                     |
+------+------+-------------------------------------------+
| shop | %    | {h} |
+------+------+-------------------------------------------+
1 row in set (0.00 sec)
""", Secret("mysql-hash", h))

    rs = F.rng("redis-config-get")
    pw = password(rs, 32)
    F.add("redis-config-get", f"""$ redis-cli -h redis-sessions.acme.internal CONFIG GET requirepass
1) "requirepass"
2) "{pw}"
""", Secret("password", pw))

    rs = F.rng("redis-cli-a-warning")
    pw = password(rs, 24)
    F.add("redis-cli-a-warning", f"""$ redis-cli -h 10.20.3.14 -p 6379 -a {pw} info replication
Warning: Using a password with '-a' or '-u' option on the command line interface may not be safe.
# Replication
role:master
connected_slaves:1
slave0:ip=10.20.3.15,port=6379,state=online,offset=88211934,lag=0
""", Secret("password", pw))

    rs = F.rng("redis-acl-setuser")
    pw = password(rs, 20)
    sha = hashlib.sha256(pw.encode()).hexdigest()
    F.add("redis-acl-setuser", f"""127.0.0.1:6379> ACL SETUSER metrics on >{pw} ~metrics:* +get +mget
OK
127.0.0.1:6379> ACL LIST
1) "user default on nopass sanitize-payload ~* &* +@all"
2) "user metrics on sanitize-payload #{sha} ~metrics:* resetchannels -@all +get +mget"
""", Secret("password", pw), Secret("acl-hash", sha))

    rs = F.rng("mongo-srv-in-log")
    pw = password(rs, 16, symbols="!-_.~")
    F.add("mongo-srv-in-log", f"""2026-12-02T12:11:03.441Z  INFO  [main] c.a.s.MongoConfig : Connecting to mongodb+srv://inventory-svc:{pw}@cluster0.x7k2p.mongodb.net/inventory?retryWrites=true&w=majority
2026-12-02T12:11:04.002Z  INFO  [cluster-ClusterId] org.mongodb.driver.cluster : Monitor thread successfully connected to server
""", Secret("url-password", pw))

    rs = F.rng("mongodump-uri")
    pw = human_password(rs)
    F.add("mongodump-uri", f"""$ history | grep mongodump
  812  mongodump --uri "mongodb://backup:{pw}@mongo-0.mongo:27017,mongo-1.mongo:27017/?replicaSet=rs0&authSource=admin" --gzip --archive=/backups/mongo-20261202.gz
  813  ls -lh /backups
""", Secret("url-password", pw))

    rs = F.rng("jdbc-query-password")
    pw = password(rs, 18, symbols="!*-_.")
    F.add("jdbc-query-password", f"""2026-12-02 12:14:01,118 ERROR [main] o.h.e.j.s.SqlExceptionHelper - Cannot create PoolableConnectionFactory (Communications link failure)
2026-12-02 12:14:01,119 ERROR [main] c.a.b.DataSourceConfig - url=jdbc:mysql://mysql-billing:3306/billing?user=billing&password={pw}&useSSL=true&serverTimezone=UTC
""", Secret("password", pw))

    rs = F.rng("adonet-connection-string")
    pw = password(rs, 20)
    F.add("adonet-connection-string", f"""info: Microsoft.EntityFrameworkCore.Infrastructure[10403]
      Entity Framework Core 8.0.10 initialized 'LedgerContext' using provider 'Microsoft.EntityFrameworkCore.SqlServer'
fail: Ledger.Api.Startup[0]
      Failed to open Server=tcp:sql-ledger-prod.database.windows.net,1433;Initial Catalog=ledger;Persist Security Info=False;User ID=ledger_app;Password={pw};MultipleActiveResultSets=False;Encrypt=True;
""", Secret("password", pw))

    rs = F.rng("pgpass-cat")
    p1, p2 = password(rs, 18), human_password(rs)
    F.add("pgpass-cat", f"""$ cat ~/.pgpass
pg-primary.acme.internal:5432:*:app:{p1}
pg-replica.acme.internal:5432:reports:reporter:{p2}
""", Secret("password", p1), Secret("password", p2))

    rs = F.rng("my-cnf")
    pw = password(rs, 22)
    F.add("my-cnf", f"""$ sudo cat /root/.my.cnf
[client]
user=root
password="{pw}"
host=localhost

[mysqldump]
single-transaction
""", Secret("password", pw))

    rs = F.rng("pg-dumpall-roles")
    h = scram(rs)
    F.add("pg-dumpall-roles", f"""--
-- Roles
--

CREATE ROLE billing;
ALTER ROLE billing WITH NOSUPERUSER INHERIT NOCREATEROLE NOCREATEDB LOGIN NOREPLICATION NOBYPASSRLS PASSWORD '{h}';
""", Secret("scram", h.split("$", 2)[2]))

    rs = F.rng("psql-api-token-column")
    t1, t2 = "ak_" + pick(rs, ALNUM, 40), "ak_" + pick(rs, ALNUM, 40)
    F.add("psql-api-token-column", f"""app=> SELECT id, email, api_token, created_at FROM api_clients ORDER BY id LIMIT 2;
 id |         email          |                 api_token                  |         created_at
----+------------------------+--------------------------------------------+----------------------------
  1 | ops@acme.io            | {t1} | 2026-01-04 09:12:44.118+00
  2 | partner-sync@globex.io | {t2} | 2026-03-19 16:40:02.551+00
(2 rows)
""", Secret("api-token", t1), Secret("api-token", t2))

    rs = F.rng("cqlshrc")
    pw = password(rs, 18)
    F.add("cqlshrc", f"""$ cat ~/.cassandra/cqlshrc
[authentication]
username = cassandra_ops
password = {pw}

[connection]
hostname = cass-0.acme.internal
port = 9042
ssl = true
""", Secret("password", pw))

    rs = F.rng("curl-elastic")
    pw = pick(rs, ALNUM, 20)
    F.add("curl-elastic", f"""$ curl -s -u elastic:{pw} 'http://es-logs.acme.internal:9200/_cluster/health?pretty'
{{
  "cluster_name" : "logs-prod",
  "status" : "yellow",
  "number_of_nodes" : 3,
  "unassigned_shards" : 4
}}
""", Secret("password", pw))

    rs = F.rng("clickhouse-users-xml")
    pw = password(rs, 20)
    F.add("clickhouse-users-xml", f"""$ grep -B2 -A3 '<password>' /etc/clickhouse-server/users.d/etl.xml
    <users>
        <etl>
            <password>{pw}</password>
            <networks>
                <ip>10.0.0.0/8</ip>
            </networks>
""", Secret("password", pw))

    rs = F.rng("redis-conf-auth")
    p1, p2 = password(rs, 28), password(rs, 28)
    F.add("redis-conf-auth", f"""$ grep -E '^(requirepass|masterauth|port|bind)' /etc/redis/redis.conf
bind 0.0.0.0
port 6379
requirepass {p1}
masterauth "{p2}"
""", Secret("password", p1), Secret("password", p2))

    rs = F.rng("influx-auth-list")
    tok = b64(rs, 64).replace("+", "-").replace("/", "_")
    F.add("influx-auth-list", f"""$ influx auth list --user telegraf
ID			Description		Token												User Name	User ID			Permissions
0c1f4e9a7b2d3000	telegraf writer		{tok}	telegraf	0c1f4e9a7a1d3000	[write:orgs/9f2b/buckets/a21c]
""", Secret("influx-token", tok))

    rs = F.rng("go-mysql-dsn")
    pw = password(rs, 16, symbols="!#%^*-_+=.")
    F.add("go-mysql-dsn", f"""2026/12/02 12:20:11 main.go:41: opening database orders:{pw}@tcp(mysql-orders.acme.internal:3306)/orders?parseTime=true&timeout=5s
2026/12/02 12:20:16 main.go:44: dial tcp 10.20.4.11:3306: i/o timeout
""", Secret("password", pw))

    rs = F.rng("rabbitmq-amqp-and-add-user")
    p1, p2 = password(rs, 18), password(rs, 20)
    F.add("rabbitmq-amqp-and-add-user", f"""$ history 3
 1041  rabbitmqctl add_user notifier {p2}
 1042  rabbitmqctl set_permissions -p /notify notifier ".*" ".*" ".*"
 1043  celery -A notify worker --broker=amqp://notifier:{p1}@rabbit-0.acme.internal:5672//notify
""", Secret("url-password", p1), Secret("password", p2))

    rs = F.rng("sqlplus-connect")
    pw = password(rs, 14, symbols="#_")
    F.add("sqlplus-connect", f"""$ ps -eo pid,args | grep [s]qlplus
 40112 sqlplus -s system/{pw}@//ora-erp.acme.internal:1521/ERPPDB1 @/opt/jobs/nightly_close.sql
""", Secret("password", pw))

    rs = F.rng("mssql-sqlcmd-history")
    pw = password(rs, 18)
    F.add("mssql-sqlcmd-history", f"""$ docker exec mssql /opt/mssql-tools18/bin/sqlcmd -S localhost -U sa -P '{pw}' -C -Q 'SELECT name FROM sys.databases'
name
--------------------------------------------------------------------------------------------------------------------------------
master
tempdb
ledger

(3 rows affected)
""", Secret("password", pw))

    rs = F.rng("mongosh-create-user")
    pw = password(rs, 20)
    F.add("mongosh-create-user", f"""rs0 [direct: primary] admin> db.createUser({{ user: "reporting", pwd: "{pw}", roles: [ {{ role: "read", db: "orders" }} ] }})
{{ ok: 1, '$clusterTime': {{ clusterTime: Timestamp({{ t: 1764677111, i: 1 }}) }}, operationTime: Timestamp({{ t: 1764677111, i: 1 }}) }}
""", Secret("password", pw))

    rs = F.rng("pgbouncer-userlist")
    m1 = "md5" + hexs(rs, 32)
    p2 = password(rs, 18)
    F.add("pgbouncer-userlist", f"""$ cat /etc/pgbouncer/userlist.txt
"app" "{m1}"
"stats" "{p2}"
""", Secret("md5", m1), Secret("password", p2))
    _ = (base64, ALNUM)
    return F

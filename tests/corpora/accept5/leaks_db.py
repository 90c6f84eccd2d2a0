# ruff: noqa: E501  (output lines as tools print them; splitting them would change their shape)
"""Leak cases: databases (connection strings of many drivers, users in dumps, client configs, CLI traces)."""

CASES: list[tuple[str, str]] = [
    ("pg-dsn-libpq-keywords", """$ psql "host=pg-primary.internal port=5432 dbname=orders user=orders_rw password={{pw}} sslmode=verify-full"
psql (16.4, server 15.8)
SSL connection (protocol: TLSv1.3, cipher: TLS_AES_256_GCM_SHA384, compression: off)
Type "help" for help.
"""),
    ("jdbc-sqlserver", """2026-12-02 07:12:44,911 INFO  [main] o.h.e.j.c.i.ConnectionProviderInitiator: url=jdbc:sqlserver://sql01.corp.local:1433;databaseName=Ledger;user=ledger_app;password={{pw}};encrypt=true;trustServerCertificate=false
2026-12-02 07:12:45,002 INFO  [main] HikariPool-1 - Start completed.
"""),
    ("ado-net-connection", """  "ConnectionStrings": {
    "Default": "Server=tcp:acme-sql.database.windows.net,1433;Initial Catalog=crm;Persist Security Info=False;User ID=crm_app;Password={{pw}};MultipleActiveResultSets=False;Encrypt=True;Connection Timeout=30;",
    "Reporting": "Data Source=rpt01;Initial Catalog=reports;Integrated Security=SSPI"
  },
"""),
    ("mongodb-srv-uri", """$ mongosh "mongodb+srv://analytics:{{upw}}@cluster0.ab1cd.mongodb.net/events?retryWrites=true&w=majority"
Current Mongosh Log ID: 674d6a2f1c9e0b7a3d2f8e11
Connecting to: mongodb+srv://<credentials>@cluster0.ab1cd.mongodb.net/events?retryWrites=true&w=majority&appName=mongosh+2.3.1
Using MongoDB: 7.0.14
"""),
    ("mysql-dsn-go", """time=2026-12-02T07:01:12Z level=info msg="opening database" dsn="inventory:{{upw}}@tcp(mysql-0.mysql.db.svc:3306)/inventory?parseTime=true&loc=UTC"
time=2026-12-02T07:01:12Z level=info msg="migrations up to date" version=47
"""),
    ("redis-url-rediss", """celery@worker-3 v5.4.0 (opalescent)
- ** ---------- .> app:         tasks:0x7f2d1c0
- ** ---------- .> transport:   rediss://default:{{apw}}@redis-12345.c1.eu-west-1-2.ec2.redns.redis-cloud.com:12345/0
- ** ---------- .> results:     disabled://
"""),
    ("amqp-url-log", """[2026-12-02 07:30:02,118: ERROR/MainProcess] consumer: Cannot connect to amqp://orders:{{pw12}}@rabbitmq.internal:5672/prod: [Errno 111] Connection refused.
Trying again in 4.00 seconds... (2/100)
"""),
    ("pgpass-cat", """$ cat ~/.pgpass
pg-primary.internal:5432:*:replicator:{{pw}}
pg-analytics.internal:5432:warehouse:etl:{{apw}}
*:*:*:postgres:{{pw12}}
"""),
    ("my-cnf", """$ cat /root/.my.cnf
[client]
user=root
password="{{pw}}"
host=127.0.0.1

[mysqldump]
user=backup
password={{apw}}
"""),
    ("pg-dumpall-roles", """--
-- Roles
--

CREATE ROLE app_ro;
ALTER ROLE app_ro WITH NOSUPERUSER INHERIT NOCREATEROLE NOCREATEDB LOGIN NOREPLICATION NOBYPASSRLS PASSWORD 'SCRAM-SHA-256$4096:{{~b64_32}}$StoredKey{{~id12}}:ServerKey{{~id12}}';
CREATE ROLE legacy_reporter;
ALTER ROLE legacy_reporter WITH LOGIN PASSWORD '{{pw}}';
"""),
    ("mysqldump-users", """--
-- Dumping data for table `users`
--

LOCK TABLES `users` WRITE;
INSERT INTO `users` VALUES (1,'admin@acme.io','{{pw}}','2025-01-03 10:00:00'),(2,'ops@acme.io','{{pw}}','2025-02-11 12:30:00');
UNLOCK TABLES;
"""),
    ("psql-select-api-keys", """ id |     name      |                 api_key                  | created_at
----+---------------+------------------------------------------+------------
  1 | zapier        | {{b62_40}} | 2026-03-11
  2 | internal-cron | {{b62_40}} | 2026-07-02
(2 rows)
"""),
    ("mysql-vertical-users", """*************************** 1. row ***************************
            id: 42
         email: billing-bot@acme.io
      password: {{pw}}
 smtp_password: {{pw}}
    created_at: 2026-09-01 08:00:00
1 row in set (0.00 sec)
"""),
    ("redis-cli-config-get", """$ redis-cli -h cache.internal -a '{{apw#a}}' --no-auth-warning CONFIG GET *pass*
1) "masterauth"
2) "{{apw#a}}"
3) "requirepass"
4) "{{apw#a}}"
"""),
    ("redis-acl-list", """$ redis-cli ACL LIST
1) "user default on nopass ~* &* +@all"
2) "user worker on #{{~sha256}} ~jobs:* +@read +@write"
3) "user migrator on >{{pw}} ~* +@all"
"""),
    ("mongo-create-user", """test> db.createUser({ user: "reporting", pwd: "{{pw}}", roles: [ { role: "read", db: "sales" } ] })
{ ok: 1 }
"""),
    ("cassandra-yaml-client", """$ cat ~/.cassandra/cqlshrc
[authentication]
username = cassandra_ops
password = {{pw}}

[connection]
hostname = cass-seed-1.internal
port = 9042
"""),
    ("elasticsearch-curl-basic", """$ curl -s -u elastic:{{pw}} https://es01.internal:9200/_cluster/health?pretty
{
  "cluster_name" : "logs-prod",
  "status" : "green",
  "number_of_nodes" : 5
}
"""),
    ("clickhouse-client-trace", """+ clickhouse-client --host ch-1.internal --user ingest --password {{apw}} --query 'SELECT count() FROM events'
1284710922
"""),
    ("snowflake-connections-toml", """$ cat ~/.snowflake/connections.toml
[default]
account = "acme-xy12345"
user = "DBT_SVC"
password = "{{pw}}"
warehouse = "TRANSFORMING"
role = "TRANSFORMER"
"""),
    ("dbt-profiles", """$ cat ~/.dbt/profiles.yml
acme:
  target: prod
  outputs:
    prod:
      type: postgres
      host: warehouse.internal
      user: dbt
      password: "{{pw}}"
      port: 5432
      dbname: analytics
      schema: marts
      threads: 8
"""),
    ("sqlalchemy-echo", """INFO:sqlalchemy.engine.Engine:select pg_catalog.version()
WARNING:app.db:falling back to replica URL postgresql+psycopg2://reporter:{{upw}}@10.20.1.15:5432/sales
INFO:sqlalchemy.engine.Engine:[raw sql] {}
"""),
    ("influx-config", """$ influx config list --json
{
	"prod": {
		"url": "https://influx.acme.io:8086",
		"token": "{{b64_64}}",
		"org": "acme",
		"active": true
	}
}
"""),
    ("neo4j-log", """2026-12-02 07:03:41.118+0000 INFO  Bolt enabled on 0.0.0.0:7687.
2026-12-02 07:03:41.911+0000 WARN  dbms.security.auth_enabled=true, initial password set from NEO4J_AUTH=neo4j/{{apw}}
"""),
    ("oracle-tnsnames-sqlplus", """+ sqlplus -s app_owner/{{upw}}@//ora-scan.corp.local:1521/ORCLPDB1 @migrate.sql
Session altered.
Table created.
"""),
]

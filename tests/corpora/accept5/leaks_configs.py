# ruff: noqa: E501  (output lines as tools print them; splitting them would change their shape)
"""Leak cases: configuration files printed by ``cat`` (web servers, package managers, ansible, terraform, compose,
systemd units)."""

CASES: list[tuple[str, str]] = [
    ("nginx-basic-auth-header", """$ cat /etc/nginx/conf.d/metrics.conf
upstream prom {
    server 127.0.0.1:9090;
}
server {
    listen 443 ssl;
    server_name metrics.acme.io;
    location / {
        proxy_set_header Authorization "Basic {{b64_32}}";
        proxy_pass http://prom;
    }
}
"""),
    ("haproxy-userlist", """$ cat /etc/haproxy/haproxy.cfg
global
    log /dev/log local0
userlist admins
    user ops insecure-password {{pw}}
    user audit password $6$rounds=5000${{~id12}}${{~sha256}}
frontend stats
    bind *:8404
    stats enable
    stats uri /stats
"""),
    ("redis-conf", """$ grep -v '^#' /etc/redis/redis.conf | grep -v '^$'
bind 127.0.0.1 -::1
protected-mode yes
port 6379
requirepass {{apw}}
masterauth {{apw}}
maxmemory 2gb
"""),
    ("npmrc", """$ cat ~/.npmrc
registry=https://registry.npmjs.org/
@acme:registry=https://npm.pkg.github.com/
//npm.pkg.github.com/:_authToken={{ghp}}
//registry.npmjs.org/:_authToken={{npm}}
always-auth=true
"""),
    ("pypirc", """$ cat ~/.pypirc
[distutils]
index-servers =
    pypi
    internal

[pypi]
username = __token__
password = {{pypi}}

[internal]
repository = https://nexus.acme.io/repository/pypi-internal/
username = deploy
password = {{pw}}
"""),
    ("netrc", """$ cat ~/.netrc
machine github.com login acme-bot password {{ghp}}
machine nexus.acme.io
  login deploy
  password {{pw}}
machine api.heroku.com login ops@acme.io password {{~uuid}}{{hex32}}
"""),
    ("maven-settings-xml", """$ cat ~/.m2/settings.xml
<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0">
  <servers>
    <server>
      <id>acme-releases</id>
      <username>deployment</username>
      <password>{{pw}}</password>
    </server>
    <server>
      <id>github</id>
      <username>acme-bot</username>
      <password>{{ghpat}}</password>
    </server>
  </servers>
</settings>
"""),
    ("gradle-properties", """$ cat ~/.gradle/gradle.properties
org.gradle.jvmargs=-Xmx4g
org.gradle.parallel=true
signing.keyId=24875D73
signing.password={{pw}}
signing.secretKeyRingFile=/home/ci/.gnupg/secring.gpg
sonatypeUsername=acme-release
sonatypePassword={{apw}}
"""),
    ("ansible-inventory-vars", """$ ansible-inventory -i inventories/prod --list --yaml | sed -n '1,20p'
all:
  children:
    db:
      hosts:
        db01.prod.acme.io:
          ansible_host: 10.10.4.11
          ansible_user: deploy
          ansible_become_pass: {{pw}}
          postgres_replication_password: {{apw}}
    web:
      hosts:
        web01.prod.acme.io:
          ansible_ssh_pass: {{pw12}}
"""),
    ("ansible-vault-view", """$ ansible-vault view group_vars/prod/vault.yml
vault_mysql_root_password: {{pw}}
vault_smtp_password: {{pw}}
vault_datadog_api_key: {{hex32}}
"""),
    ("ansible-debug-verbose", """TASK [app : render env file] ****************************************************
changed: [web01.prod.acme.io] => (item={'key': 'SECRET_KEY', 'value': '{{b64_32}}'})
ok: [web01.prod.acme.io] => (item={'key': 'DEBUG', 'value': 'false'})
"""),
    ("terraform-tfvars", """$ cat prod.auto.tfvars
region          = "eu-west-1"
instance_count  = 3
db_password     = "{{pw}}"
cloudflare_api_token = "{{b62_40}}"
tags = {
  team = "platform"
}
"""),
    ("terraform-state-pull", """$ terraform state pull | jq '.resources[] | select(.type=="random_password")'
{
  "mode": "managed",
  "type": "random_password",
  "name": "db",
  "provider": "provider[\\"registry.terraform.io/hashicorp/random\\"]",
  "instances": [
    {
      "schema_version": 3,
      "attributes": {
        "bcrypt_hash": "$2a$10${{~id12}}{{~id12}}{{~id12}}abcdefghijklm",
        "id": "none",
        "length": 24,
        "result": "{{pw24}}",
        "special": true
      },
      "sensitive_attributes": []
    }
  ]
}
"""),
    ("terraform-output-json", """$ terraform output -json
{
  "db_endpoint": {
    "sensitive": false,
    "type": "string",
    "value": "orders.cluster-abc.eu-west-1.rds.amazonaws.com"
  },
  "db_master_password": {
    "sensitive": true,
    "type": "string",
    "value": "{{pw}}"
  },
  "ci_deploy_key": {
    "sensitive": true,
    "type": "string",
    "value": "{{b62_40}}"
  }
}
"""),
    ("terraformrc-credentials", """$ cat ~/.terraform.d/credentials.tfrc.json
{
  "credentials": {
    "app.terraform.io": {
      "token": "{{terraformtoken}}"
    }
  }
}
"""),
    ("docker-compose-config", """$ docker compose config
name: shop
services:
  db:
    environment:
      MYSQL_DATABASE: shop
      MYSQL_PASSWORD: {{pw}}
      MYSQL_ROOT_PASSWORD: {{pw}}
      MYSQL_USER: shop
    image: mysql:8.4
  app:
    environment:
      MAILER_DSN: smtp://apikey:{{upw}}@smtp.sendgrid.net:587
      APP_SECRET: {{hex32}}
    image: registry.acme.io/shop:1.9.0
"""),
    ("docker-config-json", """$ cat ~/.docker/config.json
{
	"auths": {
		"registry.acme.io": {
			"auth": "{{b64_32}}"
		},
		"https://index.docker.io/v1/": {
			"auth": "{{b64_32}}"
		}
	},
	"credsStore": ""
}
"""),
    ("systemd-unit-environment", """$ systemctl cat grafana-agent.service
# /etc/systemd/system/grafana-agent.service
[Unit]
Description=Grafana Agent
After=network-online.target

[Service]
Environment=GRAFANA_CLOUD_API_KEY={{b64_64}}
Environment="PROM_REMOTE_WRITE_PASSWORD={{pw}}"
ExecStart=/usr/bin/grafana-agent --config.file=/etc/grafana-agent.yaml
Restart=always

[Install]
WantedBy=multi-user.target
"""),
    ("systemctl-show-environment", """$ systemctl show backup.service -p Environment
Environment=RESTIC_REPOSITORY=s3:s3.amazonaws.com/acme-backups RESTIC_PASSWORD={{pw}} AWS_ACCESS_KEY_ID={{akia}} AWS_SECRET_ACCESS_KEY={{awssecret}}
"""),
    ("dotenv-laravel", """$ cat .env
APP_NAME=Shop
APP_ENV=production
APP_KEY=base64:{{b64_32}}
APP_DEBUG=false
DB_CONNECTION=mysql
DB_HOST=127.0.0.1
DB_PASSWORD={{pw}}
MAIL_PASSWORD={{pw12}}
PUSHER_APP_SECRET={{hex32}}
"""),
    ("wireguard-conf", """$ sudo cat /etc/wireguard/wg0.conf
[Interface]
Address = 10.8.0.1/24
ListenPort = 51820
PrivateKey = {{b64_32}}

[Peer]
PublicKey = {{~b64_32}}
PresharedKey = {{b64_32}}
AllowedIPs = 10.8.0.2/32
"""),
    ("openvpn-auth-file", """$ cat /etc/openvpn/client/auth.txt
vpn-svc-prod
{{pw}}
"""),
    ("php-fpm-pool-env", """$ grep env /etc/php/8.3/fpm/pool.d/www.conf
env[APP_ENV] = production
env[STRIPE_SECRET] = {{sklive}}
env[DB_PASS] = {{pw}}
"""),
    ("rclone-conf", """$ rclone config show
[b2-backups]
type = b2
account = 0021a2b3c4d5e6f0000000001
key = K002{{b62_32}}

[s3-archive]
type = s3
provider = AWS
access_key_id = {{akia}}
secret_access_key = {{awssecret}}
"""),
    ("git-config-url-creds", """$ git config --list --show-origin | grep url
file:.git/config        remote.origin.url=https://acme-bot:{{ghp}}@github.com/acme/infra.git
file:.git/config        remote.gitlab.url=https://oauth2:{{glpat}}@gitlab.acme.io/platform/infra.git
"""),
    ("kafka-jaas", """$ cat /etc/kafka/client.properties
security.protocol=SASL_SSL
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="{{~id12}}" password="{{b62_40}}";
ssl.truststore.location=/etc/kafka/truststore.jks
ssl.truststore.password={{pw}}
"""),
    ("grafana-ini", """$ grep -E '^(admin|secret|password|client_secret)' /etc/grafana/grafana.ini
admin_user = admin
admin_password = {{pw}}
secret_key = {{b62_32}}
client_secret = {{b62_40}}
"""),
]

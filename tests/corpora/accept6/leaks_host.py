# ruff: noqa: E501
"""Host tools: journalctl, ssh, vault, consul, openssl, htpasswd, wg, nmcli, netrc, shadow, mount."""

from __future__ import annotations

import base64

from tests.corpora.accept6.values import (
    ALNUM,
    Family,
    Secret,
    b64,
    hexs,
    human_password,
    openssh_key,
    password,
    pem,
    pick,
    uuid,
)

CRYPT = "./" + ALNUM


def build() -> Family:
    F = Family("host")

    rs = F.rng("journalctl-redis-url")
    pw = password(rs, 24)
    F.add("journalctl-redis-url", f"""$ journalctl -u queue-worker --since -10min --no-pager
Dec 02 12:00:03 worker-3 systemd[1]: Started queue-worker.service - Queue worker.
Dec 02 12:00:04 worker-3 queue-worker[8812]: INFO broker=redis://:{pw}@redis-queue.acme.internal:6379/2 concurrency=8
Dec 02 12:00:04 worker-3 queue-worker[8812]: INFO ready
""", Secret("url-password", pw))

    rs = F.rng("vault-kv-get-table")
    p1, p2 = password(rs, 22), hexs(rs, 40)
    F.add("vault-kv-get-table", f"""$ vault kv get secret/prod/payments
======= Secret Path =======
secret/data/prod/payments

======= Metadata =======
Key                Value
---                -----
created_time       2026-11-30T10:02:11.118Z
version            12

====== Data ======
Key                Value
---                -----
db_password        {p1}
psp_api_key        {p2}
db_user            payments
""", Secret("password", p1), Secret("api-key", p2))

    rs = F.rng("vault-token-create")
    tok = "hvs." + pick(rs, ALNUM + "_-", 91)
    F.add("vault-token-create", f"""$ vault token create -policy=ci-deploy -ttl=1h
Key                  Value
---                  -----
token                {tok}
token_accessor       {pick(rs, ALNUM, 24)}
token_duration       1h
token_renewable      true
token_policies       ["ci-deploy" "default"]
""", Secret("vault-token", tok))

    rs = F.rng("vault-approle-secret-id")
    sid = uuid(rs)
    F.add("vault-approle-secret-id", f"""$ vault write -f auth/approle/role/jenkins/secret-id
Key                   Value
---                   -----
secret_id             {sid}
secret_id_accessor    {uuid(rs)}
secret_id_num_uses    0
secret_id_ttl         24h
""", Secret("secret-id", sid))

    rs = F.rng("consul-acl-token-create")
    sid = uuid(rs)
    F.add("consul-acl-token-create", f"""$ consul acl token create -description "prometheus scrape" -policy-name metrics-read
AccessorID:       {uuid(rs)}
SecretID:         {sid}
Description:      prometheus scrape
Local:            false
Create Time:      2026-12-02 12:11:40.118222 +0000 UTC
Policies:
   {uuid(rs)} - metrics-read
""", Secret("consul-secret-id", sid))

    rs = F.rng("openssl-genpkey")
    block, body = pem(rs, "PRIVATE KEY", 1218)
    F.add("openssl-genpkey", f"""$ openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 2>/dev/null
{block}
""", Secret("private-key", body))

    rs = F.rng("htpasswd-file")
    h1 = "$2y$05$" + pick(rs, CRYPT, 53)
    h2 = "$apr1$" + pick(rs, CRYPT, 8) + "$" + pick(rs, CRYPT, 22)
    F.add("htpasswd-file", f"""$ cat /etc/nginx/.htpasswd
prometheus:{h1}
grafana-scraper:{h2}
""", Secret("bcrypt", h1[7:]), Secret("apr1", h2[6:]))

    rs = F.rng("htpasswd-nb")
    pw = human_password(rs)
    h = "$2y$05$" + pick(rs, CRYPT, 53)
    F.add("htpasswd-nb", f"""$ htpasswd -nbB alertmanager {pw}
alertmanager:{h}

""", Secret("password", pw), Secret("bcrypt", h[7:]))

    rs = F.rng("wg-showconf")
    k1, k2 = b64(rs, 32), b64(rs, 32)
    F.add("wg-showconf", f"""$ sudo wg showconf wg0
[Interface]
ListenPort = 51820
FwMark = 0xca6c
PrivateKey = {k1}

[Peer]
PublicKey = {b64(rs, 32)}
PresharedKey = {k2}
AllowedIPs = 10.99.0.2/32
Endpoint = 203.0.113.44:51820
""", Secret("wg-private", k1), Secret("wg-psk", k2))

    rs = F.rng("ssh-ed25519-key")
    block, body = openssh_key(rs)
    F.add("ssh-ed25519-key", f"""$ kubectl -n ci get secret git-ssh -o jsonpath='{{.data.identity}}' | base64 -d
{block}
""", Secret("ssh-key", body))

    rs = F.rng("etc-shadow")
    h = "$6$" + pick(rs, CRYPT, 16) + "$" + pick(rs, CRYPT, 86)
    F.add("etc-shadow", f"""$ sudo grep -E '^(root|deploy):' /etc/shadow
root:*:19700:0:99999:7:::
deploy:{h}:20059:0:99999:7:::
""", Secret("sha512crypt", h.rsplit("$", 1)[1]))

    rs = F.rng("sshpass-ps")
    pw = password(rs, 16)
    F.add("sshpass-ps", f"""$ ps aux | grep [s]shpass
backup    30211  0.0  0.0   2780  1024 ?        S    12:00   0:00 sshpass -p {pw} rsync -az /var/backups/ backup@nas-01:/volume1/backups/
""", Secret("password", pw))

    rs = F.rng("smbclient-user-percent")
    pw = password(rs, 14, symbols="!#*-_.")
    F.add("smbclient-user-percent", f"""$ smbclient //fs01.corp.acme.io/finance -U 'CORP\\svc_scan%{pw}' -c 'ls'
  .                                   D        0  Wed Dec  2 09:11:40 2026
  ..                                  D        0  Mon Nov 30 17:02:11 2026
  invoices                            D        0  Wed Dec  2 08:00:03 2026
""", Secret("password", pw))

    rs = F.rng("ipsec-secrets")
    psk = b64(rs, 24)
    F.add("ipsec-secrets", f"""$ sudo cat /etc/ipsec.secrets
# /etc/ipsec.secrets - strongSwan IPsec secrets file
203.0.113.10 198.51.100.20 : PSK "{psk}"
""", Secret("psk", psk))

    rs = F.rng("nmcli-show-secrets")
    psk = human_password(rs)
    F.add("nmcli-show-secrets", f"""$ nmcli -s -g 802-11-wireless.ssid,802-11-wireless-security.key-mgmt,802-11-wireless-security.psk connection show office-5g
ACME-Office
wpa-psk
{psk}
""", Secret("wifi-psk", psk))

    rs = F.rng("docker-config-auths")
    auth = base64.b64encode(f"deploy:{pick(rs, ALNUM, 24)}".encode()).decode()
    F.add("docker-config-auths", f"""$ cat ~/.docker/config.json
{{
	"auths": {{
		"registry.acme.io": {{
			"auth": "{auth}"
		}}
	}},
	"credsStore": ""
}}
""", Secret("docker-auth", auth))

    rs = F.rng("netrc")
    t1, t2 = uuid(rs), password(rs, 20)
    F.add("netrc", f"""$ cat ~/.netrc
machine api.heroku.com
  login ops@acme.io
  password {t1}
machine nexus.acme.internal login deployer password {t2}
""", Secret("heroku", t1), Secret("password", t2))

    rs = F.rng("vault-read-db-creds")
    pw = pick(rs, ALNUM, 4) + "-" + pick(rs, ALNUM, 15)
    F.add("vault-read-db-creds", f"""$ vault read database/creds/readonly
Key                Value
---                -----
lease_id           database/creds/readonly/{pick(rs, ALNUM, 24)}
lease_duration     1h
lease_renewable    true
password           {pw}
username           v-token-readonly-{pick(rs, ALNUM, 20)}-1764677500
""", Secret("password", pw))

    rs = F.rng("openssl-pkcs12-passout")
    pw = password(rs, 16)
    F.add("openssl-pkcs12-passout", f"""$ history | tail -3
 2201  openssl pkcs12 -export -in api.crt -inkey api.key -out api.p12 -name api -passout pass:{pw}
 2202  keytool -importkeystore -srckeystore api.p12 -srcstoretype PKCS12 -destkeystore api.jks -srcstorepass {pw} -deststorepass {pw}
 2203  ls -l api.*
""", Secret("password", pw))

    rs = F.rng("consul-kv-recurse")
    pw, tok = password(rs, 20), hexs(rs, 40)
    F.add("consul-kv-recurse", f"""$ consul kv get -recurse config/billing/
config/billing/db_host:pg-billing.service.consul
config/billing/db_password:{pw}
config/billing/psp_token:{tok}
config/billing/workers:8
""", Secret("password", pw), Secret("token", tok))

    rs = F.rng("chpasswd-history")
    pw = human_password(rs)
    F.add("chpasswd-history", f"""$ sudo cat /root/.bash_history | tail -4
useradd -m -s /bin/bash deploy
echo 'deploy:{pw}' | chpasswd
usermod -aG docker deploy
exit
""", Secret("password", pw))

    rs = F.rng("mount-cifs-ps")
    pw = password(rs, 16, symbols="!#*-_.")
    F.add("mount-cifs-ps", f"""$ grep cifs /etc/fstab
//nas-01.acme.internal/backups /mnt/backups cifs username=svc_backup,password={pw},vers=3.0,uid=1001 0 0
""", Secret("password", pw))

    rs = F.rng("ssh-agent-add-passphrase-expect")
    pw = password(rs, 20)
    F.add("ssh-agent-add-passphrase-expect", f"""$ cat /usr/local/bin/unlock-deploy-key
#!/usr/bin/expect -f
spawn ssh-add /home/deploy/.ssh/id_rsa
expect "Enter passphrase for /home/deploy/.ssh/id_rsa:"
send "{pw}\\r"
expect eof
""", Secret("passphrase", pw))

    rs = F.rng("keepalived-auth-pass")
    pw = pick(rs, ALNUM, 8)
    pw2 = password(rs, 18)
    F.add("keepalived-auth-pass", f"""$ sudo grep -A3 authentication /etc/keepalived/keepalived.conf
    authentication {{
        auth_type PASS
        auth_pass {pw}
    }}
$ sudo grep -i secret /etc/ppp/chap-secrets
vpnuser  *  "{pw2}"  *
""", Secret("password", pw2))
    _ = hexs
    return F

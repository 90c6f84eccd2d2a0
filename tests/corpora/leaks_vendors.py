# ruff: noqa: E501  (a corpus of output lines as tools print them; splitting them would hide their shape)
"""Vendor tokens that name themselves by a prefix (issue #11, ``vendors``): Doppler, Linear, Terraform Cloud, Sentry,
Grafana Cloud, Databricks, Postman, Pulumi, Buildkite, Tailscale, PlanetScale, each as a tool or a log prints it.

Every value comes from a seeded RNG at import (no real credential, nothing for a secret scanner to flag).
"""

from __future__ import annotations

import base64
import json
import random
import string

from tests.corpora.leak_case import Leak

R = random.Random(20261202)
AL = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


def rs(n: int, alpha: str = AL) -> str:
    return "".join(R.choice(alpha) for _ in range(n))


def _sentry_org_token() -> str:
    claims = {"iat": 1764600000.1, "url": "https://sentry.io", "region_url": "https://us.sentry.io", "org": "acme"}
    return "sntrys_" + base64.b64encode(json.dumps(claims).encode()).decode() + "_" + rs(43, AL + "+/")


doppler_service = "dp.st.prd." + rs(43)
doppler_personal = "dp.pt." + rs(43)
doppler_cli = "dp.ct." + rs(44)
doppler_account = "dp.sa." + rs(43)
doppler_scim = "dp.scim." + rs(40)
doppler_audit = "dp.audit." + rs(42)
linear = "lin_api_" + rs(40)
linear_oauth = "lin_oauth_" + rs(64, HEX)
terraform = rs(14) + ".atlasv1." + rs(67, AL + "_=-")
sentry_org = _sentry_org_token()
sentry_user = "sntryu_" + rs(64, HEX)
grafana_cloud = "glc_" + base64.b64encode(json.dumps({"o": "123456", "n": "deploy", "k": rs(24), "m": {"r": "us"}}).encode()).decode()
databricks = "dapi" + rs(32, HEX)
postman = "PMAK-" + rs(24, HEX) + "-" + rs(34, HEX)
pulumi = "pul-" + rs(40, HEX)
buildkite = "bkua_" + rs(40, HEX)
tailscale = "tskey-auth-k" + rs(10) + "CNTRL-" + rs(33)
planetscale = "pscale_tkn_" + rs(43, AL + "_")
planetscale_pw = "pscale_pw_" + rs(43, AL + "_")

VENDOR_LEAKS: tuple[Leak, ...] = (
    Leak("vendor: doppler service token", f"$ doppler secrets download --no-file --token {doppler_service}\n", (doppler_service,)),
    Leak("vendor: doppler tokens in env", f"DOPPLER_TOKEN={doppler_personal}\nDOPPLER_CLI={doppler_cli}\n", (doppler_personal, doppler_cli)),
    Leak("vendor: doppler service account json", json.dumps({"slug": "ci", "api_token": {"key": doppler_account}}, indent=2) + "\n", (doppler_account,)),
    Leak("vendor: doppler scim and audit in a log", f"2026-12-02T00:01:02Z INFO scim sync with {doppler_scim} ok; audit export via {doppler_audit}\n", (doppler_scim, doppler_audit)),
    Leak("vendor: linear api key in a curl", f"curl -s https://api.linear.app/graphql -H 'Authorization: {linear}' -d @query.json\n", (linear,)),
    Leak("vendor: linear oauth token in json", json.dumps({"access_token": linear_oauth, "token_type": "Bearer", "expires_in": 315705599}) + "\n", (linear_oauth,)),
    Leak("vendor: terraform cloud credentials.tfrc.json", json.dumps({"credentials": {"app.terraform.io": {"token": terraform}}}, indent=2) + "\n", (terraform,)),
    Leak("vendor: terraform cloud token in env", f"TF_TOKEN_app_terraform_io={terraform}\n", (terraform,)),
    Leak("vendor: sentry org token in sentry-cli output", f"+ sentry-cli --auth-token {sentry_org} releases new 1.4.2\nCreated release 1.4.2\n", (sentry_org, sentry_org.rsplit("_", 1)[1])),
    Leak("vendor: sentry user token in a log", f"level=warn msg=\"deprecated token\" value={sentry_user}\n", (sentry_user,)),
    Leak("vendor: grafana cloud token", f"grafana-agent: remote_write basic_auth password {grafana_cloud}\n", (grafana_cloud,)),
    Leak("vendor: databricks token in databricks.cfg", f"[DEFAULT]\nhost = https://adb-1234567890123456.7.azuredatabricks.net\ntoken = {databricks}\n", (databricks,)),
    Leak("vendor: databricks token in a log", f"Dec  2 00:03:11 etl01 job[2231]: using {databricks} for workspace 42\n", (databricks,)),
    Leak("vendor: postman api key", f"newman run collection.json --env-var apiKey={postman}\n", (postman,)),
    Leak("vendor: pulumi access token", f"PULUMI_ACCESS_TOKEN={pulumi}\n", (pulumi,)),
    Leak("vendor: pulumi token in a log", f"pulumi: logging in with {pulumi}\n", (pulumi,)),
    Leak("vendor: buildkite api token", f"buildkite-agent: api token {buildkite} (user: ci)\n", (buildkite,)),
    Leak("vendor: tailscale auth key", f"$ tailscale up --authkey={tailscale} --hostname=edge-1\n", (tailscale,)),
    Leak("vendor: planetscale tokens", f"pscale auth: service token {planetscale}\nconnection password {planetscale_pw}\n", (planetscale, planetscale_pw)),
)

# Each shape alone in a log line, with no name beside it: only its prefix can say it is a secret.
_BARE = {
    "doppler service": doppler_service, "doppler personal": doppler_personal, "doppler cli": doppler_cli,
    "doppler service account": doppler_account, "doppler scim": doppler_scim, "doppler audit": doppler_audit,
    "linear api": linear, "linear oauth": linear_oauth, "terraform cloud": terraform, "sentry org": sentry_org,
    "sentry user": sentry_user, "grafana cloud": grafana_cloud, "databricks": databricks, "postman": postman,
    "pulumi": pulumi, "buildkite": buildkite, "tailscale": tailscale, "planetscale": planetscale,
}
VENDOR_LEAKS += tuple(
    Leak(f"vendor: {name} bare in a log", f"2026-12-02T00:0{i % 10}:11Z WARN retrying with {value} (attempt 2)\n", (value,))
    for i, (name, value) in enumerate(_BARE.items())
)

# A secret in a table's column: the header names the column, the row holds the value alone (bot/sanitize/tables.py).
boot1, boot2 = rs(6, HEX + "xyz") + "." + rs(16, HEX + "xyz"), rs(6, HEX + "xyz") + "." + rs(16, HEX + "xyz")
twilio_sid, twilio_secret = "SK" + rs(32, HEX), rs(32)
table_password = rs(6) + "!" + rs(5)
api_token = rs(40)
VENDOR_LEAKS += (
    Leak("table: kubeadm token list", f"""TOKEN                     TTL         EXPIRES                USAGES                   DESCRIPTION                                                EXTRA GROUPS
{boot1}   23h         2026-12-03T00:12:40Z   authentication,signing   The default bootstrap token generated by 'kubeadm init'.   system:bootstrappers:kubeadm:default-node-token
{boot2}   <forever>   <never>                authentication,signing   <none>                                                     system:bootstrappers:kubeadm:default-node-token
""", (boot1, boot2)),
    Leak("table: twilio api:core:keys:create", f"SID                                 Friendly Name  Date Created                   Secret\n{twilio_sid}  ci-deploy      Dec 02 2026 00:14:21 GMT+0000  {twilio_secret}\n", (twilio_secret,)),
    Leak("table: a password column", f"USER      HOST        PASSWORD      ROLE\nreport    10.0.3.4    {table_password}  readonly\n", (table_password,)),
    Leak("table: an api token column, tab separated", f"Name\tAPI Token\tCreated\nci\t{api_token}\t2026-12-01\n", (api_token,)),
)

# A command echoed in a CI log or a pasted session that asks for a secret's value, and the value alone after it
# (bot/sanitize/echoed.py).
echo_values = [rs(6) + "#" + rs(6) + "!" + rs(3) for _ in range(4)]
VENDOR_LEAKS += (
    Leak("echoed: set -x vault field", f"+ vault kv get -field=password secret/prod/db\n{echo_values[0]}\n+ psql -c 'select 1'\n", (echo_values[0],)),
    Leak("echoed: root prompt printenv", f"# printenv REDIS_PASSWORD\n{echo_values[1]}\n# exit\n", (echo_values[1],)),
    Leak("echoed: gcloud secrets in a CI job", f"$ gcloud secrets versions access latest --secret=db-password\n{echo_values[2]}\n$ ./deploy.sh\nDeployed.\n", (echo_values[2],)),
    Leak("echoed: kubectl jsonpath, two lines", f"$ kubectl get secret app -o go-template='{{{{.data.token | base64decode}}}}'\n{echo_values[3]}\n{echo_values[0][::-1]}\n", (echo_values[3], echo_values[0][::-1])),
)

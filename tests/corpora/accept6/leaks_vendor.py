# ruff: noqa: E501
"""Vendor tokens where they turn up: logs, git remotes, dotfiles, curl traces, source (Slack, GitHub, GitLab,
Stripe, SendGrid, Datadog, npm, PyPI, JWT, private keys, ...)."""

from __future__ import annotations

import base64
import json

from tests.corpora.accept6.values import (
    ALNUM,
    Family,
    Secret,
    b64,
    b64url,
    hexs,
    jwt,
    openssh_key,
    pem,
    pick,
)

DIGITS = "0123456789"


def build() -> Family:
    F = Family("vendor")

    rs = F.rng("slack-bot-token-log")
    tok = f"xoxb-{pick(rs, DIGITS, 13)}-{pick(rs, DIGITS, 13)}-{pick(rs, ALNUM, 24)}"
    F.add("slack-bot-token-log", f"""2026-12-02 12:01:44,118 DEBUG slack_sdk.web.base_client Sending a request - url: https://slack.com/api/chat.postMessage, query_params: {{}}, body_params: {{}}, files: {{}}, json_body: {{'channel': 'C04ALERTS', 'text': 'deploy done'}}, headers: {{'Content-Type': 'application/json;charset=utf-8', 'Authorization': '(redacted)', 'User-Agent': 'Python/3.12.3 slackclient/3.33.1'}}
2026-12-02 12:01:44,119 DEBUG notifier.slack using token={tok} for workspace acme
""", Secret("slack-token", tok))

    rs = F.rng("slack-app-token-and-signing")
    app, sig = f"xapp-1-A{pick(rs, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 10)}-{pick(rs, DIGITS, 13)}-{hexs(rs, 64)}", hexs(rs, 32)
    F.add("slack-app-token-and-signing", f"""$ cat deploy/chatbot.env
SLACK_APP_TOKEN={app}
SLACK_SIGNING_SECRET={sig}
SLACK_CHANNEL=#ops
""", Secret("slack-app-token", app), Secret("slack-signing", sig))

    rs = F.rng("git-remote-token")
    tok = "ghs_" + pick(rs, ALNUM, 36)
    F.add("git-remote-token", f"""$ git remote -v
origin	https://x-access-token:{tok}@github.com/acme/infra-live.git (fetch)
origin	https://x-access-token:{tok}@github.com/acme/infra-live.git (push)
""", Secret("github-token", tok))

    rs = F.rng("gh-auth-status-show-token")
    tok = "github_pat_11" + pick(rs, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 20) + "_" + pick(rs, ALNUM, 59)
    F.add("gh-auth-status-show-token", f"""$ gh auth status --show-token
github.com
  ✓ Logged in to github.com account acme-ops (GH_TOKEN)
  - Active account: true
  - Git operations protocol: https
  - Token: {tok}
""", Secret("github-pat", tok))

    rs = F.rng("gitlab-private-token-header")
    tok = "glpat-" + pick(rs, ALNUM + "-_", 20)
    F.add("gitlab-private-token-header", f"""$ curl -sS --header "PRIVATE-TOKEN: {tok}" "https://gitlab.acme.io/api/v4/projects/412/pipelines?per_page=2" | jq '.[].status'
"success"
"failed"
""", Secret("gitlab-pat", tok))

    rs = F.rng("stripe-python-repr")
    sk, rk = "sk_live_" + pick(rs, ALNUM, 99), "rk_live_" + pick(rs, ALNUM, 99)
    F.add("stripe-python-repr", f""">>> import stripe
>>> stripe.api_key
'{sk}'
>>> settings.STRIPE_RESTRICTED_KEY
'{rk}'
""", Secret("stripe", sk), Secret("stripe-restricted", rk))

    rs = F.rng("sendgrid-log-sentence")
    sg = "SG." + pick(rs, ALNUM + "-_", 22) + "." + pick(rs, ALNUM + "-_", 43)
    F.add("sendgrid-log-sentence", f"""Dec 02 12:04:11 mailer-2 mailer[2231]: WARN retrying send with fallback key {sg} after 401 from api.sendgrid.com
Dec 02 12:04:12 mailer-2 mailer[2231]: INFO sent 14 messages
""", Secret("sendgrid", sg))

    rs = F.rng("datadog-helm-values")
    ak, apk = hexs(rs, 32), hexs(rs, 40)
    F.add("datadog-helm-values", f"""$ cat values-datadog.yaml
datadog:
  site: datadoghq.eu
  apiKey: {ak}
  appKey: {apk}
  logs:
    enabled: true
clusterAgent:
  enabled: true
""", Secret("dd-api-key", ak), Secret("dd-app-key", apk))

    rs = F.rng("npmrc")
    tok = "npm_" + pick(rs, ALNUM, 36)
    F.add("npmrc", f"""$ cat ~/.npmrc
registry=https://registry.npmjs.org/
//registry.npmjs.org/:_authToken={tok}
fund=false
""", Secret("npm", tok))

    rs = F.rng("pypirc")
    tok = "pypi-AgEIcHlwaS5vcmc" + pick(rs, ALNUM + "-_", 160)
    F.add("pypirc", f"""$ cat ~/.pypirc
[distutils]
index-servers =
    pypi

[pypi]
username = __token__
password = {tok}
""", Secret("pypi", tok))

    rs = F.rng("curl-verbose-bearer")
    tok, core = jwt(rs)
    F.add("curl-verbose-bearer", f"""*   Trying 10.40.2.18:443...
* Connected to api.internal.acme.io (10.40.2.18) port 443
> GET /v2/orders/8812 HTTP/2
> Host: api.internal.acme.io
> user-agent: curl/8.5.0
> accept: */*
> authorization: Bearer {tok}
>
< HTTP/2 404
< content-type: application/json
""", Secret("jwt", core))

    rs = F.rng("nginx-log-access-token")
    tok, core = jwt(rs)
    F.add("nginx-log-access-token", f"""10.40.7.12 - - [02/Dec/2026:12:03:18 +0000] "GET /ws/notifications?access_token={tok}&v=3 HTTP/1.1" 101 0 "-" "Mozilla/5.0 (X11; Linux x86_64)" rt=0.002
10.40.7.12 - - [02/Dec/2026:12:03:19 +0000] "GET /api/health HTTP/1.1" 200 17 "-" "kube-probe/1.30" rt=0.001
""", Secret("jwt", core))

    rs = F.rng("rsa-private-key-cat")
    block, body = pem(rs, "RSA PRIVATE KEY", 1190)
    F.add("rsa-private-key-cat", f"""$ sudo cat /etc/ssl/private/api.acme.io.key
{block}
""", Secret("rsa-key", body))

    rs = F.rng("openssh-private-key")
    block, body = openssh_key(rs)
    F.add("openssh-private-key", f"""$ cat ~deploy/.ssh/id_ed25519
{block}
$ cat ~deploy/.ssh/id_ed25519.pub
ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{pick(rs, ALNUM, 43)} deploy@bastion
""", Secret("ssh-key", body))

    rs = F.rng("ec-key-in-json")
    block, body = pem(rs, "EC PRIVATE KEY", 121)
    F.add("ec-key-in-json", json.dumps({"kid": hexs(rs, 16), "alg": "ES256", "private_key": block + "\n"}, indent=2),
          *(Secret("ec-key", line) for line in body.splitlines()))

    rs = F.rng("twilio-json")
    tok = hexs(rs, 32)
    F.add("twilio-json", f"""$ cat config/twilio.json
{{"account_sid": "AC{hexs(rs, 32)}", "auth_token": "{tok}", "from": "+14155550123"}}
""", Secret("twilio", tok))

    rs = F.rng("openai-docker-run")
    tok = "sk-proj-" + pick(rs, ALNUM + "-_", 156)
    F.add("openai-docker-run", f"""$ ps -eo args | grep [d]ocker
docker run -d --name summarizer -e OPENAI_API_KEY={tok} -p 8088:8088 acme/summarizer:1.4
""", Secret("openai", tok))

    rs = F.rng("anthropic-key-yaml")
    tok = "sk-ant-api03-" + pick(rs, ALNUM + "-_", 93) + "AA"
    F.add("anthropic-key-yaml", f"""llm:
  provider: anthropic
  model: claude-sonnet-4-5
  api_key: {tok}
  max_tokens: 4096
""", Secret("anthropic", tok))

    rs = F.rng("google-api-key-bundle")
    key = "AIza" + pick(rs, ALNUM + "-_", 35)
    F.add("google-api-key-bundle", f"""$ grep -o 'maps.googleapis.com[^"]*' dist/assets/index-{hexs(rs, 8)}.js | head -2
maps.googleapis.com/maps/api/js?key={key}&libraries=places
maps.googleapis.com/maps/api/geocode/json?key={key}
""", Secret("google-api-key", key))

    rs = F.rng("mailgun-shopify-tfc")
    mg, sh, tfc = "key-" + hexs(rs, 32), "shpat_" + hexs(rs, 32), pick(rs, ALNUM, 14) + ".atlasv1." + pick(rs, ALNUM, 67)
    F.add("mailgun-shopify-tfc", f"""$ grep -rhoE '(key-|shpat_|atlasv1)[^"]*' ~/notes/handover.md
MAILGUN_API_KEY="{mg}"
shopify admin token {sh} (store acme-merch)
~/.terraform.d/credentials.tfrc.json: "token": "{tfc}"
""", Secret("mailgun", mg), Secret("shopify", sh), Secret("tfc", tfc))

    rs = F.rng("telegram-bot-url")
    tok = f"{pick(rs, DIGITS, 10)}:AA{pick(rs, ALNUM + '-_', 33)}"
    F.add("telegram-bot-url", f"""2026-12-02T12:07:55Z ERROR alert-relay: POST https://api.telegram.org/bot{tok}/sendMessage failed: 429 Too Many Requests (retry after 11)
""", Secret("telegram", tok))

    rs = F.rng("basic-auth-header-b64")
    raw = f"grafana-sync:{pick(rs, ALNUM, 20)}"
    enc = base64.b64encode(raw.encode()).decode()
    F.add("basic-auth-header-b64", f"""> POST /api/dashboards/db HTTP/1.1
> Host: grafana.acme.internal:3000
> Authorization: Basic {enc}
> Content-Type: application/json
< HTTP/1.1 200 OK
""", Secret("basic-auth", enc))

    rs = F.rng("huggingface-token")
    tok = "hf_" + pick(rs, ALNUM, 34)
    F.add("huggingface-token", f"""$ cat ~/.cache/huggingface/token; echo
{tok}
""", Secret("hf", tok))

    rs = F.rng("pagerduty-and-newrelic")
    pd, nr = pick(rs, ALNUM + "-_+", 20), "NRAK-" + pick(rs, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 27)
    F.add("pagerduty-and-newrelic", f"""$ cat /etc/alerting/integrations.yaml
pagerduty:
  routing_key: R0{hexs(rs, 30)}
  api_token: {pd}
newrelic:
  user_api_key: {nr}
""", Secret("pagerduty", pd), Secret("newrelic", nr))

    rs = F.rng("jwt-in-json-log")
    tok, core = jwt(rs)
    F.add("jwt-in-json-log", f"""{{"ts":"2026-12-02T12:09:12.551Z","level":"warn","svc":"gateway","msg":"token rejected","reason":"expired","token":"{tok}","path":"/v1/me"}}
""", Secret("jwt", core))
    _ = (b64, b64url)
    return F

# ruff: noqa: E501
"""CI/CD logs: GitHub Actions, GitLab, Jenkins, ArgoCD, Buildkite, Azure Pipelines, shell ``set -x`` traces."""

from __future__ import annotations

from tests.corpora.accept6.values import (
    ALNUM,
    Family,
    Secret,
    aws_secret,
    b64,
    hexs,
    human_password,
    jwt,
    password,
    pick,
    uuid,
)


def build() -> Family:
    F = Family("ci")

    rs = F.rng("gha-curl-trace")
    tok = "ghs_" + pick(rs, ALNUM, 36)
    F.add("gha-curl-trace", f"""2026-12-02T11:58:40.1180281Z ##[group]Run ./scripts/tag-release.sh
2026-12-02T11:58:40.1181002Z shell: /usr/bin/bash -e {{0}}
2026-12-02T11:58:40.1182210Z ##[endgroup]
2026-12-02T11:58:40.2214411Z + curl -sf -X POST -H 'Authorization: token {tok}' -H 'Accept: application/vnd.github+json' https://api.github.com/repos/acme/api/git/refs -d '{{"ref":"refs/tags/v4.2.0","sha":"{hexs(rs, 40)}"}}'
2026-12-02T11:58:40.6630187Z + echo 'tagged v4.2.0'
2026-12-02T11:58:40.6631102Z tagged v4.2.0
""", Secret("github-token", tok))

    rs = F.rng("gha-docker-login")
    pw = password(rs, 24)
    F.add("gha-docker-login", f"""2026-12-02T11:40:02.5510000Z ##[group]Run docker login -u acme-ci -p {pw} registry.acme.io
2026-12-02T11:40:02.5520000Z docker login -u acme-ci -p {pw} registry.acme.io
2026-12-02T11:40:02.5530000Z ##[endgroup]
2026-12-02T11:40:03.0110000Z WARNING! Using --password via the CLI is insecure. Use --password-stdin.
2026-12-02T11:40:03.9190000Z Login Succeeded
""", Secret("password", pw))

    rs = F.rng("gitlab-clone-and-npm")
    jt, npm = "glcbt-64_" + pick(rs, ALNUM + "-_", 20), "npm_" + pick(rs, ALNUM, 36)
    F.add("gitlab-clone-and-npm", f"""Running with gitlab-runner 17.5.2 (a0e2d5b8)
  on acme-shared-runner-3 t3_xYz12, system ID: s_{hexs(rs, 12)}
Getting source from Git repository
$ git clone https://gitlab-ci-token:{jt}@gitlab.acme.io/platform/ui-kit.git
Cloning into 'ui-kit'...
$ npm config set //registry.npmjs.org/:_authToken {npm}
$ npm publish --access public
npm notice Publishing to https://registry.npmjs.org/ with tag latest and public access
+ @acme/ui-kit@5.3.1
Job succeeded
""", Secret("gitlab-job-token", jt), Secret("npm", npm))

    rs = F.rng("jenkins-mysql-trace")
    pw = password(rs, 16)
    F.add("jenkins-mysql-trace", f"""[Pipeline] stage
[Pipeline] {{ (Smoke test DB)
[Pipeline] sh
+ mysql -h mysql-staging.acme.internal -u deployer -p{pw} -e 'SELECT 1'
mysql: [Warning] Using a password on the command line interface can be insecure.
1
1
[Pipeline] }}
""", Secret("password", pw))

    rs = F.rng("jenkins-vault-token-export")
    tok = "hvs." + pick(rs, ALNUM + "_-", 91)
    F.add("jenkins-vault-token-export", f"""[Pipeline] sh
+ export VAULT_ADDR=https://vault.acme.internal:8200
+ VAULT_ADDR=https://vault.acme.internal:8200
+ export VAULT_TOKEN={tok}
+ VAULT_TOKEN={tok}
+ vault kv get -field=username secret/ci/registry
ci-pusher
""", Secret("vault-token", tok))

    rs = F.rng("argocd-generate-token")
    tok, core = jwt(rs)
    F.add("argocd-generate-token", f"""$ argocd account generate-token --account ci-sync --expires-in 720h
{tok}
""", Secret("jwt", core))

    rs = F.rng("argocd-repo-add-trace")
    pat = "ghp_" + pick(rs, ALNUM, 36)
    F.add("argocd-repo-add-trace", f"""+ argocd login argocd.acme.io --grpc-web --sso=false --username admin --password "$ARGOCD_PASSWORD"
'admin:login' logged in successfully
+ argocd repo add https://github.com/acme/gitops.git --username acme-bot --password {pat} --upsert
Repository 'https://github.com/acme/gitops.git' added
""", Secret("github-pat", pat))

    rs = F.rng("set-x-database-url")
    p1, p2 = password(rs, 20), password(rs, 18)
    F.add("set-x-database-url", f"""+ source /etc/profile.d/app.sh
++ export DATABASE_URL=postgresql://svc_api:{p1}@db-primary.acme.internal:5432/api
++ DATABASE_URL=postgresql://svc_api:{p1}@db-primary.acme.internal:5432/api
+ PGPASSWORD={p2}
+ psql -h db-replica.acme.internal -U readonly -d api -c 'select count(*) from jobs'
 count
-------
  8812
(1 row)
""", Secret("url-password", p1), Secret("pgpassword", p2))

    rs = F.rng("circleci-env-export")
    sk = aws_secret(rs)
    F.add("circleci-env-export", f"""#!/bin/bash -eo pipefail
echo 'export AWS_DEFAULT_REGION="eu-west-1"' >> "$BASH_ENV"
cat "$BASH_ENV"
export AWS_DEFAULT_REGION="eu-west-1"
export AWS_SECRET_ACCESS_KEY="{sk}"
export CIRCLE_BRANCH="main"

CircleCI received exit code 0
""", Secret("aws-secret", sk))

    rs = F.rng("gha-debug-webhook")
    hook = f"https://hooks.slack.com/services/T{pick(rs, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 8)}/B{pick(rs, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 10)}/{pick(rs, ALNUM, 24)}"
    F.add("gha-debug-webhook", f"""##[debug]Evaluating: secrets.SLACK_DEPLOY_WEBHOOK
##[debug]Evaluating Index:
##[debug]..Evaluating secrets:
##[debug]..=> Object
##[debug]..Evaluating String:
##[debug]..=> 'SLACK_DEPLOY_WEBHOOK'
##[debug]=> '{hook}'
##[debug]Result: '{hook}'
""", Secret("slack-webhook", hook.rsplit("/", 1)[1]))

    rs = F.rng("terraform-var-trace")
    pw = password(rs, 20)
    F.add("terraform-var-trace", f"""+ terraform -chdir=envs/prod apply -input=false -auto-approve -var "db_password={pw}" -var "env=prod"
module.rds.aws_db_instance.main: Modifying... [id=orders-prod]
module.rds.aws_db_instance.main: Still modifying... [id=orders-prod, 10s elapsed]
""", Secret("password", pw))

    rs = F.rng("buildkite-build-arg")
    npm = "npm_" + pick(rs, ALNUM, 36)
    F.add("buildkite-build-arg", f"""~~~ :docker: Building image
$ docker build --build-arg NPM_TOKEN={npm} -t acme/web:{hexs(rs, 12)} .
#7 [deps 3/5] RUN echo "//registry.npmjs.org/:_authToken=${{NPM_TOKEN}}" > .npmrc && npm ci
#7 2.118 added 1214 packages in 14s
""", Secret("npm", npm))

    rs = F.rng("ansible-vvv-result")
    pw = password(rs, 18)
    F.add("ansible-vvv-result", f"""TASK [db : create application user] *************************************
ok: [db01.acme.internal] => {{
    "changed": false,
    "invocation": {{
        "module_args": {{
            "login_host": "localhost",
            "login_password": "{pw}",
            "login_user": "root",
            "name": "app"
        }}
    }},
    "user": "app"
}}
""", Secret("password", pw))

    rs = F.rng("azure-pipelines-sp-login")
    sec = pick(rs, ALNUM, 3) + "8Q~" + pick(rs, ALNUM + "~._-", 31)
    F.add("azure-pipelines-sp-login", f"""##[section]Starting: Deploy
==============================================================================
Task         : Azure CLI
==============================================================================
##[command]az login --service-principal -u {uuid(rs)} -p {sec} --tenant {uuid(rs)}
[
  {{
    "cloudName": "AzureCloud",
    "isDefault": true,
    "name": "acme-prod"
  }}
]
""", Secret("azure-client-secret", sec))

    rs = F.rng("helm-set-trace")
    p1, p2 = password(rs, 16), password(rs, 20)
    F.add("helm-set-trace", f"""+ helm upgrade --install checkout ./charts/checkout --namespace shop --set image.tag=4.18.2 --set db.password={p1} --set redis.auth.password={p2} --wait
Release "checkout" has been upgraded. Happy Helming!
NAME: checkout
LAST DEPLOYED: Wed Dec  2 12:04:51 2026
STATUS: deployed
REVISION: 58
""", Secret("password", p1), Secret("password", p2))

    rs = F.rng("gitlab-runner-register")
    tok = "glrt-" + pick(rs, ALNUM + "-_", 20)
    F.add("gitlab-runner-register", f"""$ sudo gitlab-runner register --non-interactive --url https://gitlab.acme.io/ --token {tok} --executor docker --docker-image alpine:3.20
Runtime platform                                    arch=amd64 os=linux pid=24412 revision=a0e2d5b8 version=17.5.2
Verifying runner... is valid                        runner=glrt-{tok[5:8]}
Runner registered successfully. Feel free to start it, but if it's running already the config should be automatically reloaded!
""", Secret("gitlab-runner-token", tok))

    rs = F.rng("gha-run-env-block")
    pw = human_password(rs)
    F.add("gha-run-env-block", f"""##[group]Run terraform plan -out=tfplan
terraform plan -out=tfplan
shell: /usr/bin/bash -e {{0}}
env:
  TF_IN_AUTOMATION: true
  AWS_REGION: eu-west-1
  TF_VAR_grafana_admin_password: {pw}
  AWS_SECRET_ACCESS_KEY: ***
##[endgroup]
""", Secret("password", pw))

    rs = F.rng("echo-password-stdin")
    pw = password(rs, 22)
    F.add("echo-password-stdin", f"""+ echo {pw}
+ docker login --username robot$ci --password-stdin harbor.acme.io
Login Succeeded
""", Secret("password", pw))

    rs = F.rng("git-credentials-store")
    pw = password(rs, 20)
    F.add("git-credentials-store", f"""+ git config --global credential.helper store
+ echo 'https://deploy-bot:{pw}@git.acme.internal'
+ git fetch --tags origin
From https://git.acme.internal/platform/charts
 * [new tag]         v1.9.0     -> v1.9.0
""", Secret("url-password", pw))

    rs = F.rng("npmrc-append-trace")
    pat = "ghp_" + pick(rs, ALNUM, 36)
    F.add("npmrc-append-trace", f"""+ echo '@acme:registry=https://npm.pkg.github.com'
+ echo '//npm.pkg.github.com/:_authToken={pat}'
+ npm ci --prefer-offline
added 842 packages, and audited 843 packages in 19s
""", Secret("github-pat", pat))

    rs = F.rng("jenkins-withcredentials-leak")
    key = b64(rs, 32)
    F.add("jenkins-withcredentials-leak", f"""[Pipeline] withCredentials
Masking supported pattern matches of $SIGNING_KEY
[Pipeline] {{
[Pipeline] sh
+ echo ****
****
+ openssl enc -aes-256-cbc -pbkdf2 -in release.tar -out release.tar.enc -pass pass:{key}
[Pipeline] }}
""", Secret("passphrase", key))

    rs = F.rng("drone-env-dump")
    pw = password(rs, 18)
    F.add("drone-env-dump", f"""+ env | sort | grep -v ^DRONE_
CI=true
HOME=/root
PLUGIN_PASSWORD={pw}
PLUGIN_REGISTRY=registry.acme.io
PLUGIN_USERNAME=drone
""", Secret("password", pw))

    rs = F.rng("tekton-git-init")
    tok = "glpat-" + pick(rs, ALNUM + "-_", 20)
    F.add("tekton-git-init", f"""{{"level":"info","ts":1764676901.338,"caller":"git/git.go:178","msg":"Successfully cloned https://oauth2:{tok}@gitlab.acme.io/platform/api.git @ {hexs(rs, 40)} (grafted, HEAD) in path /workspace/source"}}
{{"level":"info","ts":1764676901.612,"caller":"git/git.go:217","msg":"Successfully initialized and updated submodules in path /workspace/source"}}
""", Secret("gitlab-pat", tok))
    return F

# ruff: noqa: E501  (output lines as tools print them; splitting them would change their shape)
"""Leak cases: CI systems (GitHub Actions, GitLab CI, Jenkins, Buildkite, CircleCI) logs and env dumps."""

CASES: list[tuple[str, str]] = [
    ("gha-env-dump", """2026-12-02T07:11:02.4410000Z ##[group]Run env | sort
2026-12-02T07:11:02.4410000Z env | sort
2026-12-02T07:11:02.4420000Z shell: /usr/bin/bash -e {0}
2026-12-02T07:11:02.4420000Z ##[endgroup]
2026-12-02T07:11:02.4512000Z CI=true
2026-12-02T07:11:02.4513000Z DEPLOY_KEY_PASSPHRASE={{pw}}
2026-12-02T07:11:02.4513000Z GITHUB_REF=refs/heads/main
2026-12-02T07:11:02.4514000Z NETLIFY_AUTH_TOKEN={{b62_40}}
2026-12-02T07:11:02.4515000Z RUNNER_OS=Linux
"""),
    ("gha-set-x-curl", """2026-12-02T07:12:10.1000000Z + curl -fsSL -X POST -H 'Authorization: token {{ghs}}' -H 'Accept: application/vnd.github+json' https://api.github.com/repos/acme/web/deployments -d '{"ref":"main","environment":"prod"}'
2026-12-02T07:12:10.7000000Z {"id": 1928374650, "sha": "4c1e0aa", "environment": "prod"}
"""),
    ("gha-checkout-extraheader", """2026-12-02T07:10:00.2000000Z [command]/usr/bin/git config --local http.https://github.com/.extraheader AUTHORIZATION: basic {{b64_64}}
2026-12-02T07:10:00.2100000Z [command]/usr/bin/git -c protocol.version=2 fetch --no-tags --prune --no-recurse-submodules --depth=1 origin +4c1e0aa:refs/remotes/origin/main
"""),
    ("gitlab-ci-variables-debug", """$ export
declare -x CI_JOB_TOKEN="{{glrt}}"
declare -x CI_PROJECT_PATH="platform/billing"
declare -x CI_REGISTRY_PASSWORD="{{b62_32}}"
declare -x CI_REGISTRY_USER="gitlab-ci-token"
declare -x SENTRY_AUTH_TOKEN="sntrys_{{b62_40}}{{b62_40}}"
declare -x TF_VAR_db_password="{{pw}}"
"""),
    ("gitlab-runner-register", """$ sudo gitlab-runner register --non-interactive --url https://gitlab.acme.io --token {{glrt}} --executor docker --docker-image alpine:3.20
Runtime platform                                    arch=amd64 os=linux pid=20133 revision=1b659122 version=17.5.2
Verifying runner... is valid                        runner=glrt-abc
Runner registered successfully. Feel free to start it, but if it's running already the config should be automatically reloaded!
"""),
    ("gitlab-runner-config-toml", """$ cat /etc/gitlab-runner/config.toml
concurrent = 4
check_interval = 0

[[runners]]
  name = "docker-eu-1"
  url = "https://gitlab.acme.io"
  id = 112
  token = "{{glrt}}"
  token_obtained_at = 2026-10-01T08:00:00Z
  executor = "docker"
  [runners.cache.s3]
    ServerAddress = "s3.amazonaws.com"
    AccessKey = "{{akia}}"
    SecretKey = "{{awssecret}}"
    BucketName = "runner-cache-acme"
"""),
    ("jenkins-credentials-xml", """$ cat /var/lib/jenkins/credentials.xml
<?xml version='1.1' encoding='UTF-8'?>
<com.cloudbees.plugins.credentials.SystemCredentialsProvider plugin="credentials@1337.v60b_d7b_c7b_c9f">
  <domainCredentialsMap class="hudson.util.CopyOnWriteMap$Hash">
    <entry>
      <java.util.concurrent.CopyOnWriteArrayList>
        <com.cloudbees.plugins.credentials.impl.UsernamePasswordCredentialsImpl>
          <scope>GLOBAL</scope>
          <id>nexus-deploy</id>
          <username>deployer</username>
          <password>{{pw}}</password>
        </com.cloudbees.plugins.credentials.impl.UsernamePasswordCredentialsImpl>
        <org.jenkinsci.plugins.plaincredentials.impl.StringCredentialsImpl>
          <id>slack-token</id>
          <secret>{{xoxb}}</secret>
        </org.jenkinsci.plugins.plaincredentials.impl.StringCredentialsImpl>
      </java.util.concurrent.CopyOnWriteArrayList>
    </entry>
  </domainCredentialsMap>
</com.cloudbees.plugins.credentials.SystemCredentialsProvider>
"""),
    ("jenkins-console-sh-x", """[Pipeline] sh
+ docker login -u ci-pusher -p {{pw}} registry.acme.io
WARNING! Using --password via the CLI is insecure. Use --password-stdin.
Login Succeeded
[Pipeline] sh
+ ./gradlew publish -PnexusPassword={{apw}}
> Task :publish
BUILD SUCCESSFUL in 41s
"""),
    ("jenkins-initial-admin-password", """$ kubectl -n jenkins logs jenkins-0 -c jenkins | sed -n '/Please use the following password/,+3p'
Please use the following password to proceed to installation:

{{hex32}}

"""),
    ("buildkite-agent-cfg", """$ cat /etc/buildkite-agent/buildkite-agent.cfg
token="{{hex64}}"
name="%hostname-%spawn"
tags="queue=deploy,os=linux"
build-path="/var/lib/buildkite-agent/builds"
"""),
    ("buildkite-env-hook-trace", """~~~ Running global environment hook
$ /etc/buildkite-agent/hooks/environment
+ export DOCKERHUB_TOKEN=dckr_pat_{{b62_32}}
+ DOCKERHUB_TOKEN=dckr_pat_{{b62_32}}
+ export PAGERDUTY_ROUTING_KEY={{hex32}}
~~~ Preparing working directory
"""),
    ("circleci-env-step", """#!/bin/bash -eo pipefail
printenv | grep -E 'CIRCLE|HEROKU'
CIRCLE_BRANCH=main
CIRCLE_BUILD_NUM=48211
HEROKU_API_KEY={{~uuid}}{{~id8}}
HEROKU_API_KEY_ALT={{hex32}}
CIRCLE_PROJECT_REPONAME=storefront
"""),
    ("drone-secret-ls", """$ drone secret info acme/web --name docker_password
docker_password
Pull Request Read:  false
Pull Request Write: false
Data: {{pw}}
"""),
    ("argo-workflows-log", """build-and-push-8x2kq-1721718171: time="2026-12-02T07:22:10Z" level=info msg="kaniko: pushing to registry" auth="{\\"auths\\":{\\"registry.acme.io\\":{\\"username\\":\\"kaniko\\",\\"password\\":\\"{{pw}}\\"}}}"
build-and-push-8x2kq-1721718171: time="2026-12-02T07:22:41Z" level=info msg="pushed registry.acme.io/web@sha256:{{~sha256}}"
"""),
    ("tekton-taskrun-params", """apiVersion: tekton.dev/v1
kind: TaskRun
metadata:
  name: deploy-run-7gh2k
spec:
  params:
  - name: image
    value: registry.acme.io/web:8f2c1
  - name: registry-password
    value: {{pw}}
  - name: sonar-token
    value: squ_{{hex40}}
"""),
    ("azure-devops-pipeline-log", """2026-12-02T07:13:12.7731520Z ##[section]Starting: Publish artifacts
2026-12-02T07:13:12.8120000Z ==============================================================================
2026-12-02T07:13:12.8300000Z + npm config set //pkgs.dev.azure.com/acme/_packaging/feed/npm/registry/:_password={{b64_64}}
2026-12-02T07:13:13.0100000Z + az devops login --organization https://dev.azure.com/acme <<< {{b62_40}}{{b62_32}}
"""),
    ("github-cli-auth-status-show-token", """$ gh auth status --show-token
github.com
  ✓ Logged in to github.com account acme-bot (/home/runner/.config/gh/hosts.yml)
  - Active account: true
  - Git operations protocol: https
  - Token: {{gho}}
  - Token scopes: 'gist', 'read:org', 'repo', 'workflow'
"""),
    ("gh-hosts-yml", """$ cat ~/.config/gh/hosts.yml
github.com:
    users:
        acme-bot:
            oauth_token: {{gho}}
    git_protocol: https
    oauth_token: {{gho}}
    user: acme-bot
"""),
]

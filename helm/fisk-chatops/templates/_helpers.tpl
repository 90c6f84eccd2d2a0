{{/* Names and labels. */}}
{{- define "fisk-chatops.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "fisk-chatops.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "fisk-chatops.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Selector labels of the app pods (every role, never the in-chart Redis). */}}
{{- define "fisk-chatops.selectorLabels" -}}
app.kubernetes.io/name: {{ include "fisk-chatops.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "fisk-chatops.labels" -}}
helm.sh/chart: {{ include "fisk-chatops.chart" . }}
{{ include "fisk-chatops.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: fisk-chatops
{{- end -}}

{{- define "fisk-chatops.redisName" -}}
{{- printf "%s-redis" (include "fisk-chatops.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "fisk-chatops.redisSelectorLabels" -}}
app.kubernetes.io/name: {{ printf "%s-redis" (include "fisk-chatops.name" .) | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: redis
{{- end -}}

{{- define "fisk-chatops.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "fisk-chatops.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "fisk-chatops.secretName" -}}
{{- default (include "fisk-chatops.fullname" .) .Values.secrets.existingSecret -}}
{{- end -}}

{{- define "fisk-chatops.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The role Deployments to render: a list of role names. */}}
{{- define "fisk-chatops.roles" -}}
{{- if eq .Values.roles.mode "combined" -}}
combined
{{- else -}}
slack agent runner
{{- end -}}
{{- end -}}

{{/* Whether the shared /opt/fisk/bin volume filled by init containers is in use. */}}
{{- define "fisk-chatops.fiskAppsVolume" -}}
{{- if or .Values.fiskApps.image.repository .Values.fiskApps.initContainers -}}true{{- end -}}
{{- end -}}

{{/*
Checks the JSON schema cannot express well; each failure names the value to change.
Included by the ConfigMap, which is always rendered.
*/}}
{{- define "fisk-chatops.validate" -}}
{{- $ext := .Values.redis.external -}}
{{- $internal := .Values.redis.internal.enabled -}}
{{- if and $ext.url $ext.existingSecret -}}
{{- fail "redis.external: set either url or existingSecret, not both" -}}
{{- end -}}
{{- $sentinelMode := eq $ext.mode "sentinel" -}}
{{- if and $sentinelMode (or $ext.url $ext.existingSecret) -}}
{{- fail "redis.external.mode=sentinel: the sentinels name the primary; leave redis.external.url and redis.external.existingSecret empty (the data nodes' password goes in redis.external.password)" -}}
{{- end -}}
{{- if and $sentinelMode (not (and $ext.sentinel.addresses $ext.sentinel.serviceName)) -}}
{{- fail "redis.external.mode=sentinel needs redis.external.sentinel.addresses (host:port list) and redis.external.sentinel.serviceName" -}}
{{- end -}}
{{- if and (not $sentinelMode) (or $ext.sentinel.addresses $ext.sentinel.serviceName $ext.sentinel.username $ext.sentinel.password.existingSecret $ext.sentinel.tls) -}}
{{- fail (printf "redis.external.sentinel.* is set but redis.external.mode is %s: set redis.external.mode=sentinel or remove them" $ext.mode) -}}
{{- end -}}
{{- if and (eq $ext.mode "cluster") (not (or $ext.url $ext.existingSecret)) -}}
{{- fail "redis.external.mode=cluster needs redis.external.url or redis.external.existingSecret: any node of the cluster" -}}
{{- end -}}
{{- if and $ext.tls.existingSecret (not $ext.tls.enabled) -}}
{{- fail "redis.external.tls.existingSecret is set but redis.external.tls.enabled is false: set tls.enabled=true or remove it" -}}
{{- end -}}
{{- if ne (empty $ext.tls.certKey) (empty $ext.tls.keyKey) -}}
{{- fail "redis.external.tls: set both certKey and keyKey (a client certificate and its key), or neither" -}}
{{- end -}}
{{- if and $ext.tls.certKey (not $ext.tls.existingSecret) -}}
{{- fail "redis.external.tls.certKey/keyKey need redis.external.tls.existingSecret (the Secret holding the files)" -}}
{{- end -}}
{{- $external := or $ext.url $ext.existingSecret $sentinelMode -}}
{{- if and $internal (or (ne $ext.mode "standalone") $ext.username $ext.password.existingSecret $ext.tls.enabled) -}}
{{- fail "redis.external.mode/username/password/tls describe an external Redis: set redis.internal.enabled=false (the in-chart Redis is a plain standalone server without a password)" -}}
{{- end -}}
{{- if and $external $internal -}}
{{- fail "redis: both redis.external and redis.internal.enabled are set; configure exactly one (set redis.internal.enabled=false to use your external Redis)" -}}
{{- end -}}
{{- if not (or $external $internal) -}}
{{- fail "redis: no Redis configured. The embedded Redis the app starts without REDIS_URL cannot be shared by pods in Kubernetes: set redis.external.url, or redis.external.existingSecret (with redis.external.key), or redis.internal.enabled=true (trials)" -}}
{{- end -}}
{{- if hasKey .Values.config "decisions" -}}
{{- fail "config.decisions: set the chart values decisionKeys.* instead; the chart mounts the keys and writes the paths" -}}
{{- end -}}
{{- if and (kindIs "map" .Values.config.redis) (hasKey .Values.config.redis "url") -}}
{{- fail "config.redis.url: do not put the Redis URL in the configuration; set redis.external.url or redis.external.existingSecret" -}}
{{- end -}}
{{- if kindIs "map" .Values.config.redis -}}
{{- range $k := list "mode" "username" "tls" "sentinel" -}}
{{- if hasKey $.Values.config.redis $k -}}
{{- fail (printf "config.redis.%s: set the chart values redis.external.* instead; the chart writes the Redis connection settings (and mounts the TLS files, injects the passwords)" $k) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if kindIs "map" .Values.config.slack -}}
{{- range $k := list "mode" "http_port" "http_path" -}}
{{- if hasKey $.Values.config.slack $k -}}
{{- fail (printf "config.slack.%s: set the chart value slack.%s instead; the chart writes it into the configuration (and uses it for the Service, ports and Secret keys)" $k (ternary "mode" (printf "http.%s" (trimPrefix "http_" $k)) (eq $k "mode"))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if not .Values.secrets.create -}}
{{- range $k, $v := .Values.secrets.values -}}
{{- if $v -}}
{{- fail (printf "secrets.values.%s is set but secrets.create is false: token values are used only with secrets.create=true (trials); in production put them in the Secret named by secrets.existingSecret" $k) -}}
{{- end -}}
{{- end -}}
{{- else -}}
{{- if not .Values.secrets.values.slackBotToken -}}
{{- fail "secrets.create=true needs secrets.values.slackBotToken" -}}
{{- end -}}
{{- if not .Values.secrets.values.anthropicApiKey -}}
{{- fail "secrets.create=true needs secrets.values.anthropicApiKey" -}}
{{- end -}}
{{- if and (eq .Values.slack.mode "socket") (not .Values.secrets.values.slackAppToken) -}}
{{- fail "secrets.create=true with slack.mode=socket needs secrets.values.slackAppToken" -}}
{{- end -}}
{{- if and (eq .Values.slack.mode "http") (not .Values.secrets.values.slackSigningSecret) -}}
{{- fail "secrets.create=true with slack.mode=http needs secrets.values.slackSigningSecret" -}}
{{- end -}}
{{- end -}}
{{- if and .Values.roles.runner.autoscaling.enabled (eq .Values.roles.mode "combined") -}}
{{- fail "roles.runner.autoscaling.enabled applies to roles.mode=split only (there is no runner Deployment in combined mode)" -}}
{{- end -}}
{{- if and .Values.roles.runner.autoscaling.enabled (lt (int .Values.roles.runner.autoscaling.maxReplicas) (int .Values.roles.runner.autoscaling.minReplicas)) -}}
{{- fail "roles.runner.autoscaling: maxReplicas must be >= minReplicas" -}}
{{- end -}}
{{- /* the slack role refuses to start with nobody named as approver: say so at install, not in a crash loop */ -}}
{{- $approval := default dict .Values.config.approval -}}
{{- $approvers := default dict $approval.approvers -}}
{{- if not (or $approvers.users $approvers.groups $approval.anyone_may_approve) -}}
{{- fail "config.approval: name who may approve calls (config.approval.approvers.users / .groups: Slack user or user-group ids), or set config.approval.anyone_may_approve=true to let anyone who sees a card approve it; the slack role refuses to start otherwise" -}}
{{- end -}}
{{- end -}}

{{/* REDIS_URL for the app containers. */}}
{{- define "fisk-chatops.redisEnv" -}}
{{- if .Values.redis.external.existingSecret }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.redis.external.existingSecret }}
      key: {{ .Values.redis.external.key }}
{{- else if .Values.redis.external.url }}
- name: REDIS_URL
  value: {{ .Values.redis.external.url | quote }}
{{- else if .Values.redis.internal.enabled }}
- name: REDIS_URL
  value: {{ printf "redis://%s:%d/0" (include "fisk-chatops.redisName" .) (int .Values.redis.internal.port) | quote }}
{{- end }}
{{- with .Values.redis.external.password.existingSecret }}
- name: REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $.Values.redis.external.password.key }}
{{- end }}
{{- with .Values.redis.external.sentinel.password.existingSecret }}
- name: REDIS_SENTINEL_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $.Values.redis.external.sentinel.password.key }}
{{- end }}
{{- end -}}

{{/* The `redis:` connection settings of the configuration, from redis.external (no secret: those are env). */}}
{{- define "fisk-chatops.redisConfig" -}}
{{- $ext := .Values.redis.external -}}
{{- $redis := dict "mode" $ext.mode -}}
{{- with $ext.username -}}
{{- $_ := set $redis "username" . -}}
{{- end -}}
{{- if $ext.tls.enabled -}}
{{- $tls := dict "enabled" true -}}
{{- if and $ext.tls.existingSecret $ext.tls.caKey -}}
{{- $_ := set $tls "ca_file" "/etc/fisk-chatops/redis-tls/ca.crt" -}}
{{- end -}}
{{- if and $ext.tls.existingSecret $ext.tls.certKey -}}
{{- $_ := set $tls "cert_file" "/etc/fisk-chatops/redis-tls/tls.crt" -}}
{{- $_ := set $tls "key_file" "/etc/fisk-chatops/redis-tls/tls.key" -}}
{{- end -}}
{{- $_ := set $redis "tls" $tls -}}
{{- end -}}
{{- if eq $ext.mode "sentinel" -}}
{{- $sentinel := dict "addresses" $ext.sentinel.addresses "service_name" $ext.sentinel.serviceName "tls" $ext.sentinel.tls -}}
{{- with $ext.sentinel.username -}}
{{- $_ := set $sentinel "username" . -}}
{{- end -}}
{{- $_ := set $redis "sentinel" $sentinel -}}
{{- end -}}
{{- toYaml $redis -}}
{{- end -}}

{{- define "fisk-chatops.secretEnv" -}}
{{- $secret := include "fisk-chatops.secretName" .root -}}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ .key }}
      {{- if .optional }}
      optional: true
      {{- end }}
{{- end -}}

{{/* Environment of one role's container: only the credentials that role uses. */}}
{{- define "fisk-chatops.env" -}}
{{- $root := .root -}}
{{- $role := .role -}}
{{- $keys := $root.Values.secrets.keys -}}
- name: FISK_CHATOPS_CONFIG
  value: /etc/fisk-chatops/config.yaml
{{- include "fisk-chatops.redisEnv" $root }}
{{- if or (eq $role "slack") (eq $role "combined") }}
{{ include "fisk-chatops.secretEnv" (dict "root" $root "env" "SLACK_BOT_TOKEN" "key" $keys.slackBotToken) }}
{{- if eq $root.Values.slack.mode "socket" }}
{{ include "fisk-chatops.secretEnv" (dict "root" $root "env" "SLACK_APP_TOKEN" "key" $keys.slackAppToken) }}
{{- else }}
{{ include "fisk-chatops.secretEnv" (dict "root" $root "env" "SLACK_SIGNING_SECRET" "key" $keys.slackSigningSecret) }}
{{- end }}
{{- end }}
{{- if and $root.Values.incidents.enabled (or (eq $role "slack") (eq $role "combined")) }}
{{ include "fisk-chatops.secretEnv" (dict "root" $root "env" "FISK_CHATOPS_ALERTMANAGER_TOKEN" "key" $keys.alertmanagerToken "optional" true) }}
{{ include "fisk-chatops.secretEnv" (dict "root" $root "env" "FISK_CHATOPS_ALERTMANAGER_BASIC_AUTH" "key" $keys.alertmanagerBasicAuth "optional" true) }}
{{ include "fisk-chatops.secretEnv" (dict "root" $root "env" "FISK_CHATOPS_PAGERDUTY_SECRETS" "key" $keys.pagerdutySecrets "optional" true) }}
{{- end }}
{{- if or (eq $role "agent") (eq $role "combined") }}
{{ include "fisk-chatops.secretEnv" (dict "root" $root "env" "ANTHROPIC_API_KEY" "key" $keys.anthropicApiKey) }}
{{- end }}
{{- with $root.Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "fisk-chatops.signingSecretName" -}}
{{- default (printf "%s-decision-key" (include "fisk-chatops.fullname" .)) .Values.decisionKeys.signingSecret -}}
{{- end -}}

{{- define "fisk-chatops.publicSecretName" -}}
{{- default (printf "%s-decision-public" (include "fisk-chatops.fullname" .)) .Values.decisionKeys.publicSecret -}}
{{- end -}}

{{/* The application configuration: values.config plus the Slack connection settings owned by chart values. */}}
{{- define "fisk-chatops.config" -}}
{{- $config := deepCopy .Values.config -}}
{{- $_ := set $config "decisions" (dict "signing_key_file" "/etc/fisk-chatops/decision-key/signing.key" "public_key_files" (list "/etc/fisk-chatops/decision-public") "valid_seconds" .Values.decisionKeys.validSeconds) -}}
{{- $slack := dict -}}
{{- if kindIs "map" $config.slack -}}
{{- $slack = $config.slack -}}
{{- end -}}
{{- $_ := set $slack "mode" .Values.slack.mode -}}
{{- $_ := set $slack "http_port" (int .Values.slack.http.port) -}}
{{- $_ := set $slack "http_path" .Values.slack.http.path -}}
{{- $_ := set $config "slack" $slack -}}
{{- $incidents := dict -}}
{{- if kindIs "map" $config.incidents -}}
{{- $incidents = $config.incidents -}}
{{- end -}}
{{- $_ := set $incidents "enabled" .Values.incidents.enabled -}}
{{- $_ := set $incidents "listen" "own" -}}
{{- $_ := set $incidents "http_port" (int .Values.incidents.port) -}}
{{- $_ := set $config "incidents" $incidents -}}
{{- $redis := dict -}}
{{- if kindIs "map" $config.redis -}}
{{- $redis = $config.redis -}}
{{- end -}}
{{- $_ := set $config "redis" (merge $redis (fromYaml (include "fisk-chatops.redisConfig" .))) -}}
{{- toYaml $config -}}
{{- end -}}

{{/*
Expand the name of the chart.
*/}}
{{- define "yahtzee-scoring.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Create a default fully qualified app name.
We truncate at 63 chars because some Kubernetes name fields are limited to this (by the DNS naming spec).
If release name contains chart name it will be used as a full name.
*/}}
{{- define "yahtzee-scoring.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Create chart name and version as used by the chart label.
*/}}
{{- define "yahtzee-scoring.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Common labels
*/}}
{{- define "yahtzee-scoring.labels" -}}
helm.sh/chart: {{ include "yahtzee-scoring.chart" . }}
{{ include "yahtzee-scoring.selectorLabels" . }}
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Selector labels
*/}}
{{- define "yahtzee-scoring.selectorLabels" -}}
app.kubernetes.io/name: {{ include "yahtzee-scoring.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Create the name of the service account to use
*/}}
{{- define "yahtzee-scoring.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "yahtzee-scoring.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The container image: repository@digest when image.digest is set (the tag is then ignored), else
repository:tag, the tag defaulting to the chart's appVersion.
*/}}
{{- define "yahtzee-scoring.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion | toString) }}
{{- end }}
{{- end }}

{{/*
The pods that run when nothing is disrupted: replicaCount, or the HPA's minReplicas.
*/}}
{{- define "yahtzee-scoring.pods" -}}
{{- ternary .Values.autoscaling.minReplicas .Values.replicaCount .Values.autoscaling.enabled | int }}
{{- end }}

{{/*
"true" when a value is given: not null and not "" (0 is given).
*/}}
{{- define "yahtzee-scoring.given" -}}
{{- if and (not (kindIs "invalid" .)) (ne (toString .) "") }}true{{ end }}
{{- end }}

{{/*
The PromQL label matchers of the release's pods and the service's container (the PodMonitor,
ServiceMonitor and kube-state-metrics all label series with namespace and pod).
*/}}
{{- define "yahtzee-scoring.podMatchers" -}}
namespace="{{ .Release.Namespace }}",pod=~"{{ include "yahtzee-scoring.fullname" . }}-[a-z0-9]+-[a-z0-9]+"
{{- end }}
{{- define "yahtzee-scoring.containerMatchers" -}}
{{ include "yahtzee-scoring.podMatchers" . }},container="{{ .Chart.Name }}"
{{- end }}

{{/*
Labels of the `helm test` pod: the release's, but not the selector labels, so that neither the
Service nor the PodDisruptionBudget nor the NetworkPolicy counts it as one of the service's pods.
*/}}
{{- define "yahtzee-scoring.testLabels" -}}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: test-connection
{{- end }}

{{/*
Checks across values that values.schema.json cannot express; each fails with a message that
names the values.
*/}}
{{- define "yahtzee-scoring.validate" -}}
{{- if and .Values.autoscaling.enabled (gt (int .Values.autoscaling.minReplicas) (int .Values.autoscaling.maxReplicas)) }}
{{- fail (printf "autoscaling.minReplicas (%d) is above autoscaling.maxReplicas (%d)" (int .Values.autoscaling.minReplicas) (int .Values.autoscaling.maxReplicas)) }}
{{- end }}
{{- if and .Values.autoscaling.enabled (not (include "yahtzee-scoring.given" (dig "requests" "cpu" nil .Values.resources))) }}
{{- fail "autoscaling.enabled is true but resources.requests.cpu is not set: the HPA scales on CPU use as a percentage of requests.cpu (autoscaling.targetCPUUtilizationPercentage), which cannot be computed without it; set resources.requests.cpu (e.g. 250m) or autoscaling.enabled=false" }}
{{- end }}
{{- if and .Values.autoscaling.enabled (eq (toString (dig "requests" "cpu" "" .Values.resources)) "0") }}
{{- fail "autoscaling.enabled is true but resources.requests.cpu is 0: the HPA scales on CPU use as a percentage of requests.cpu; set it above 0 (e.g. 250m) or autoscaling.enabled=false" }}
{{- end }}
{{- with .Values.podDisruptionBudget }}
{{- $min := include "yahtzee-scoring.given" .minAvailable }}
{{- $max := include "yahtzee-scoring.given" .maxUnavailable }}
{{- $pods := include "yahtzee-scoring.pods" $ | int }}
{{- $podsFrom := ternary "autoscaling.minReplicas" "replicaCount" $.Values.autoscaling.enabled }}
{{- if and .enabled (gt $pods 1) }}
{{- if and $min $max }}
{{- fail (printf "podDisruptionBudget.minAvailable (%v) and podDisruptionBudget.maxUnavailable (%v) are both set: a PodDisruptionBudget takes one of them; set the other to \"\" (or null)" .minAvailable .maxUnavailable) }}
{{- end }}
{{- if not (or $min $max) }}
{{- fail "podDisruptionBudget.enabled is true but neither podDisruptionBudget.minAvailable nor podDisruptionBudget.maxUnavailable is set: give one, or set podDisruptionBudget.enabled=false" }}
{{- end }}
{{- if $min }}
{{- $blocks := false }}
{{- if kindIs "string" .minAvailable }}
{{- $blocks = ge (trimSuffix "%" .minAvailable | int) 100 }}
{{- else }}
{{- $blocks = ge (int .minAvailable) $pods }}
{{- end }}
{{- if $blocks }}
{{- fail (printf "podDisruptionBudget.minAvailable (%v) is not below the %d pods that run (%s): the PodDisruptionBudget would let no pod be evicted and block every node drain; lower it, give podDisruptionBudget.maxUnavailable instead, or run more pods" .minAvailable $pods $podsFrom) }}
{{- end }}
{{- end }}
{{- if and $max (eq (trimSuffix "%" (toString .maxUnavailable)) "0") }}
{{- fail (printf "podDisruptionBudget.maxUnavailable (%v) lets no pod be evicted: it would block every node drain; give at least 1 (or 1%%)" .maxUnavailable) }}
{{- end }}
{{- end }}
{{- end }}
{{- if eq (int .Values.metrics.port) (int .Values.containerPort) }}
{{- fail (printf "metrics.port (%d) is containerPort: /metrics must have a port of its own, which the Service does not publish; give another port" (int .Values.metrics.port)) }}
{{- end }}
{{- if and .Values.metrics.podMonitor.enabled .Values.metrics.serviceMonitor.enabled }}
{{- fail "metrics.podMonitor.enabled and metrics.serviceMonitor.enabled are both true: each pod would be scraped twice and every count doubled in sums; keep one (the PodMonitor needs no Service)" }}
{{- end }}
{{- if .Values.metrics.prometheusRule.enabled }}
{{- $queue := int (.Values.config.ADVISOR_BUILD_QUEUE | default 16) }}
{{- if gt (int .Values.metrics.prometheusRule.thresholds.buildQueueDepth) $queue }}
{{- fail (printf "metrics.prometheusRule.thresholds.buildQueueDepth (%d) is above config.ADVISOR_BUILD_QUEUE (%d): a pod's build queue never holds more, so the alert could never fire" (int .Values.metrics.prometheusRule.thresholds.buildQueueDepth) $queue) }}
{{- end }}
{{- end }}
{{- $graceful := int (.Values.config.GUNICORN_GRACEFUL_TIMEOUT | default 25) }}
{{- $needed := add (int .Values.preStopSleepSeconds) $graceful }}
{{- if le (int .Values.terminationGracePeriodSeconds) (int $needed) }}
{{- fail (printf "terminationGracePeriodSeconds (%d) must exceed preStopSleepSeconds (%d) + config.GUNICORN_GRACEFUL_TIMEOUT (%d), or Kubernetes kills pods mid-request" (int .Values.terminationGracePeriodSeconds) (int .Values.preStopSleepSeconds) $graceful) }}
{{- end }}
{{- if .Values.auth.enabled }}
{{- if and .Values.auth.existingSecret .Values.auth.tenants }}
{{- fail "auth.existingSecret and auth.tenants are both set: give the tenants in one place, either your own Secret (auth.existingSecret) or auth.tenants for a Secret the chart makes" }}
{{- end }}
{{- if not (or .Values.auth.existingSecret .Values.auth.tenants) }}
{{- fail "auth.enabled is true (the service requires API keys) but no keys are given: set auth.tenants (make a key and its entry with `python -m service.web.auth new-key --tenant NAME`) or auth.existingSecret (a Secret holding the tenants file), or set auth.enabled=false to serve everyone as the anonymous tenant (AUTH=off)" }}
{{- end }}
{{- $ids := dict }}
{{- range $tenant := .Values.auth.tenants }}
{{- range $key := $tenant.keys }}
{{- if hasKey $ids $key.id }}
{{- fail (printf "auth.tenants: key id %q is given twice (tenants %q and %q); each key needs its own id" $key.id (get $ids $key.id) $tenant.name) }}
{{- end }}
{{- $_ := set $ids $key.id $tenant.name }}
{{- end }}
{{- end }}
{{- end }}
{{- with .Values.rateLimit }}
{{- if and .storage .storageSecret }}
{{- fail "rateLimit.storage and rateLimit.storageSecret are both set: give the Redis URL in one of them" }}
{{- end }}
{{- if regexMatch "^rediss?://" .storage }}
{{- $port := (regexFind ":[0-9]+$" (urlParse .storage).host | trimPrefix ":") | default "6379" }}
{{- if ne $port (toString .redis.port) }}
{{- fail (printf "rateLimit.redis.port (%v) is not the port of rateLimit.storage (%s): the NetworkPolicy would block the service's connections to Redis" .redis.port $port) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
"true" when quotas are counted in Redis (rateLimit.storage is a redis:// or rediss:// URL, or
comes from rateLimit.storageSecret), else empty.
*/}}
{{- define "yahtzee-scoring.redisStorage" -}}
{{- if or .Values.rateLimit.storageSecret (regexMatch "^rediss?://" .Values.rateLimit.storage) }}true{{ end }}
{{- end }}

{{/*
The Secret holding the tenants file: auth.existingSecret, or the one the chart makes.
*/}}
{{- define "yahtzee-scoring.keysSecretName" -}}
{{- .Values.auth.existingSecret | default (printf "%s-api-keys" (include "yahtzee-scoring.fullname" .)) }}
{{- end }}

{{/*
The tenants file the chart puts in its Secret (from auth.tenants).
*/}}
{{- define "yahtzee-scoring.tenantsFile" -}}
{{- dict "tenants" .Values.auth.tenants | toPrettyJson }}
{{- end }}

{{/* The release's name prefix: "millrace" for `helm install millrace`, as Millrace's kubernetes
autoscaling integration expects by default (millrace-worker-<group>). */}}
{{- define "millrace.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "millrace.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "millrace.selector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "millrace.secretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-secrets" (include "millrace.fullname" .)) -}}
{{- end -}}

{{/* A group's Deployment name: lower case, "_" becomes "-" (Kubernetes object names). */}}
{{- define "millrace.workerName" -}}
{{- printf "%s-worker-%s" (include "millrace.fullname" .root) (.group | lower | replace "_" "-") -}}
{{- end -}}

{{- define "millrace.image" -}}
{{- printf "%s:%s" .repository (.tag | default .appVersion) -}}
{{- end -}}

{{/* DATABASE_URL for servers and workers: through PgBouncer when it is enabled. */}}
{{- define "millrace.databaseEnv" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "millrace.secretName" . }}
      key: {{ ternary .Values.secrets.pooledDatabaseUrlKey .Values.secrets.databaseUrlKey .Values.pgbouncer.enabled }}
- name: MILLRACE_SECRET_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "millrace.secretName" . }}
      key: {{ .Values.secrets.secretKeyKey }}
{{- end -}}

{{/* Millrace's KEDA query (packages/core/src/fleet/keda-query.ts renderKedaQuery, with the cap
maxReplicas × targetQueryValue): the chart test checks that both render the same SQL. */}}
{{- define "millrace.kedaQuery" -}}
{{- $tags := list -}}
{{- range (.tags | uniq | sortAlpha) -}}
{{- if not (regexMatch "^[A-Za-z0-9_.-]{1,64}$" .) -}}
{{- fail (printf "workerGroups: %q is not a tag (1-64 letters, digits, _ . or -)" .) -}}
{{- end -}}
{{- $tags = append $tags (printf "'%s'" .) -}}
{{- end -}}
{{- printf "SELECT count(*) AS waiting FROM (SELECT 1 FROM job WHERE status = 'queued' AND tag IN (%s) AND scheduled_for <= now() LIMIT %d) AS w" (join ", " $tags) (int .cap) -}}
{{- end -}}

{{/* The name of every object of the release. */}}
{{- define "csi-node-proxy.fullname" -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The labels that select the release's pods; never change on upgrade. */}}
{{- define "csi-node-proxy.selectorLabels" -}}
app.kubernetes.io/name: csi-node-proxy
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The labels of every object. */}}
{{- define "csi-node-proxy.labels" -}}
{{ include "csi-node-proxy.selectorLabels" . }}
app.kubernetes.io/component: proxy
app.kubernetes.io/version: {{ include "csi-node-proxy.tag" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The image tag: image.tag, or the chart's appVersion. */}}
{{- define "csi-node-proxy.tag" -}}
{{- .Values.image.tag | default .Chart.AppVersion -}}
{{- end -}}

{{/* Whether the release is for Windows nodes; fails on an unknown os. */}}
{{- define "csi-node-proxy.windows" -}}
{{- if not (has .Values.os (list "linux" "windows")) -}}
{{- fail (printf "os is %q: want linux or windows" .Values.os) -}}
{{- end -}}
{{- if eq .Values.os "windows" }}true{{ end -}}
{{- end -}}

{{/*
The metrics listener, host:port. An empty host is 127.0.0.1, or every
address with the PodMonitor: Prometheus scrapes the pod IP, which for a
host-network pod is the node's. A loopback host with the PodMonitor fails:
nothing could be scraped.
*/}}
{{- define "csi-node-proxy.metricsAddress" -}}
{{- $m := .Values.metrics -}}
{{- $host := $m.host -}}
{{- if and $m.podMonitor.enabled (has $host (list "127.0.0.1" "localhost" "::1")) -}}
{{- fail (printf "metrics.podMonitor.enabled with metrics.host %s: Prometheus could not scrape a loopback listener; leave metrics.host empty" $host) -}}
{{- end -}}
{{- if and (not $host) (not $m.podMonitor.enabled) -}}
{{- $host = "127.0.0.1" -}}
{{- end -}}
{{- if contains ":" $host -}}
{{- $host = printf "[%s]" $host -}}
{{- end -}}
{{- printf "%s:%d" $host (int $m.port) -}}
{{- end -}}

{{/* The API groups --apis serves, for csi-node-proxyctl health --group; empty: all. */}}
{{- define "csi-node-proxy.groups" -}}
{{- $groups := list -}}
{{- range .Values.apis -}}
{{- $groups = append $groups (splitList "-" . | first) -}}
{{- end -}}
{{- $groups | uniq | join "," -}}
{{- end -}}

{{/* The policy file's path as the daemon sees it. */}}
{{- define "csi-node-proxy.policyDir" -}}
{{- if include "csi-node-proxy.windows" . }}C:\etc\csi-node-proxy{{ else }}/etc/csi-node-proxy{{ end -}}
{{- end -}}

{{/* The audit log's directory on the node. */}}
{{- define "csi-node-proxy.auditDir" -}}
{{- if .Values.auditLog.dir -}}
{{- .Values.auditLog.dir -}}
{{- else if include "csi-node-proxy.windows" . -}}
C:\var\log\csi-node-proxy
{{- else -}}
/var/log/csi-node-proxy
{{- end -}}
{{- end -}}

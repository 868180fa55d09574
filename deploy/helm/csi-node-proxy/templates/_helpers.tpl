{{/* The chart's name: nameOverride, or the chart's own. */}}
{{- define "csi-node-proxy.name" -}}
{{- .Values.nameOverride | default .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The prefix of every object's name: fullnameOverride, or the release name
followed by the chart's name unless the release name already has it (Helm's
own convention, which helm create writes). 55 characters at most, so the
DaemonSets' names (<prefix>-windows) stay within 63.
*/}}
{{- define "csi-node-proxy.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 55 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "csi-node-proxy.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 55 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 55 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The pods' ServiceAccount. */}}
{{- define "csi-node-proxy.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "csi-node-proxy.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{/* The labels that select the release's pods; never change on upgrade. */}}
{{- define "csi-node-proxy.selectorLabels" -}}
app.kubernetes.io/name: {{ include "csi-node-proxy.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
The labels that select one OS's pods, with a dict of root (the chart's
context) and os: the two DaemonSets must not select each other's pods.
*/}}
{{- define "csi-node-proxy.osSelectorLabels" -}}
{{ include "csi-node-proxy.selectorLabels" .root }}
csi-node-proxy.io/os: {{ .os }}
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

{{/*
The OSes the release serves, as a list joined by spaces; fails when none is
enabled (the release would install nothing that serves a node).
*/}}
{{- define "csi-node-proxy.oses" -}}
{{- $oses := list -}}
{{- range $os := list "linux" "windows" -}}
{{- if (index $.Values $os).enabled -}}
{{- $oses = append $oses $os -}}
{{- end -}}
{{- end -}}
{{- if not $oses -}}
{{- fail "linux.enabled and windows.enabled are both false: enable the node OSes the release serves" -}}
{{- end -}}
{{- join " " $oses -}}
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

{{/* The policy file as every daemon reads it: mode, presets and rules. */}}
{{- define "csi-node-proxy.policy" -}}
{{- $p := .Values.policy -}}
{{- dict "mode" $p.mode "presets" ($p.presets | default list) "rules" ($p.rules | default list) | toYaml -}}
{{- end -}}

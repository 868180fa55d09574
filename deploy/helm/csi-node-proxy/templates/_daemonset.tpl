{{/*
One node OS's DaemonSet, <prefix>-<os>, from a dict of root (the chart's
context) and os (linux or windows). Linux: a privileged pod serving Unix
sockets, as deploy/linux/csi-node-proxy.yaml; Windows: a HostProcess pod
serving named pipes, as deploy/windows/csi-node-proxy.yaml.
*/}}
{{- define "csi-node-proxy.daemonset" -}}
{{- $r := .root }}
{{- $v := $r.Values }}
{{- $os := .os }}
{{- $o := index $v $os }}
{{- $windows := eq $os "windows" }}
{{- if and $windows $v.windows.pipeGroup $v.windows.pipeSDDL }}
{{- fail "windows.pipeGroup and windows.pipeSDDL: give one; pipeGroup adds a group to the default descriptor, pipeSDDL replaces it" }}
{{- end }}
{{- $name := printf "%s-%s" (include "csi-node-proxy.fullname" $r) $os }}
{{- $kubelet := $o.kubeletPath }}
{{- $policyDir := ternary "C:\\etc\\csi-node-proxy" "/etc/csi-node-proxy" $windows }}
{{- $auditDir := $o.auditDir }}
{{- $sep := ternary "\\" "/" $windows }}
{{- /* The flags both OSes share, after the OS's own. */}}
{{- $flags := list (printf "--kubelet-path=%s" $kubelet) }}
{{- range $o.workingDirs }}
{{- $flags = append $flags (printf "--working-dir=%s" .) }}
{{- end }}
{{- range $o.allowedServices }}
{{- $flags = append $flags (printf "--allowed-service=%s" .) }}
{{- end }}
{{- with $v.apis }}
{{- $flags = append $flags (printf "--apis=%s" (join "," .)) }}
{{- end }}
{{- if $v.policy.enabled }}
{{- $flags = append $flags (printf "--policy=%s%spolicy.yaml" $policyDir $sep) }}
{{- $flags = append $flags (printf "--policy-reload-interval=%s" $v.policy.reloadInterval) }}
{{- end }}
{{- if $v.auditLog.enabled }}
{{- $flags = append $flags (printf "--audit-log=%s%saudit.log" $auditDir $sep) }}
{{- if $v.auditLog.reads }}
{{- $flags = append $flags "--audit-reads" }}
{{- end }}
{{- end }}
{{- $flags = append $flags "--metrics-bind-address=$(METRICS_ADDRESS)" }}
{{- $flags = append $flags (printf "-v=%d" (int $v.verbosity)) }}
{{- $flags = concat $flags $v.extraArgs }}
{{- $repository := $o.image.repository | default $v.image.repository }}
{{- $tag := $o.image.tag | default (include "csi-node-proxy.tag" $r) }}
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: {{ $name }}
  namespace: {{ $r.Release.Namespace }}
  labels:
    {{- include "csi-node-proxy.labels" $r | nindent 4 }}
    csi-node-proxy.io/os: {{ $os }}
spec:
  selector:
    matchLabels:
      {{- include "csi-node-proxy.osSelectorLabels" . | nindent 6 }}
  updateStrategy:
    # One node at a time: while a node's proxy restarts, the plugin calls on
    # that node fail and the kubelet retries them.
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 1
  template:
    metadata:
      labels:
        {{- /* podLabels first: the chart's own labels, which the selector needs, win. */}}
        {{- $labels := merge (fromYaml (include "csi-node-proxy.labels" $r)) (dict "csi-node-proxy.io/os" $os) }}
        {{- toYaml (merge $labels $o.podLabels $v.podLabels) | nindent 8 }}
      annotations:
        {{- if $v.policy.enabled }}
        # The policy is re-read while running; the checksum only records
        # which one a pod started with.
        csi-node-proxy.io/policy-checksum: {{ include "csi-node-proxy.policy" $r | sha256sum | quote }}
        {{- end }}
        {{- with merge (deepCopy $o.podAnnotations) $v.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "csi-node-proxy.serviceAccountName" $r }}
      automountServiceAccountToken: false
      os:
        name: {{ $os }}
      nodeSelector:
        {{- toYaml (merge (dict "kubernetes.io/os" $os) (omit $o.nodeSelector "kubernetes.io/os")) | nindent 8 }}
      {{- with $o.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- with $v.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      # Windows: HostProcess pods must use the host network. Linux: kernel
      # CIFS mounts keep the network namespace of the process that made
      # them, and iscsiadm reaches iscsid on an abstract Unix socket.
      hostNetwork: true
      {{- if not $windows }}
      dnsPolicy: ClusterFirstWithHostNet
      {{- if $v.linux.hostPID }}
      # To identify callers: without the host PID namespace the kernel
      # reports pid 0 for them, and their groups, containers and pods are lost.
      hostPID: true
      {{- end }}
      {{- else }}
      securityContext:
        windowsOptions:
          hostProcess: true
          # Disk, volume and SMB operations need an administrator; SYSTEM
          # is what upstream's csiproxy service runs as.
          runAsUserName: "NT AUTHORITY\\SYSTEM"
      {{- end }}
      terminationGracePeriodSeconds: {{ $v.terminationGracePeriodSeconds }}
      containers:
        - name: csi-node-proxy
          image: "{{ $repository }}:{{ $tag }}"
          imagePullPolicy: {{ $v.image.pullPolicy }}
          {{- if $windows }}
          # The runtime replaces %CONTAINER_SANDBOX_MOUNT_POINT% with where
          # the image's files are (C:\hpc with containerd 1.7+).
          command:
            - '%CONTAINER_SANDBOX_MOUNT_POINT%\csi-node-proxy.exe'
            - --host=windows
            {{- with $v.windows.pipeGroup }}
            - {{ printf "--pipe-group=%s" . | quote }}
            {{- end }}
            {{- with $v.windows.pipeSDDL }}
            - {{ printf "--pipe-sddl=%s" . | quote }}
            {{- end }}
            {{- range $flags }}
            - {{ . | quote }}
            {{- end }}
          {{- else }}
          command:
            - /usr/local/bin/csi-node-proxy
          args:
            - --host=linux
            - {{ printf "--socket-dir=%s" $v.linux.socketDir | quote }}
            {{- with $v.linux.socketGroup }}
            - {{ printf "--socket-group=%v" . | quote }}
            {{- end }}
            {{- with $v.linux.socketMode }}
            - {{ printf "--socket-mode=%v" . | quote }}
            {{- end }}
            - {{ printf "--linux-filesystem=%s" $v.linux.filesystem | quote }}
            {{- with $v.linux.criEndpoint }}
            - {{ printf "--cri-endpoint=%s" . | quote }}
            {{- end }}
            {{- range $flags }}
            - {{ . | quote }}
            {{- end }}
          securityContext:
            # mount(2), block device ioctls, sysfs writes and the
            # Bidirectional mounts below need a privileged container.
            privileged: true
          {{- end }}
          env:
            # The node's name, for the audit records' "node" field.
            - name: NODE_NAME
              valueFrom:
                fieldRef:
                  fieldPath: spec.nodeName
            # Where /metrics, /healthz and /readyz listen (metrics.host).
            - name: METRICS_ADDRESS
              value: {{ include "csi-node-proxy.metricsAddress" $r | quote }}
          ports:
            # A host port (host network): the scheduler keeps anything else
            # asking for it off the node.
            - name: metrics
              containerPort: {{ int $v.metrics.port }}
              protocol: TCP
          # The kubelet runs on the node and reaches the daemon's listener
          # at 127.0.0.1 (host network), wherever else it listens. Restarting
          # the proxy interrupts calls in flight, so only after a minute.
          livenessProbe:
            httpGet:
              host: 127.0.0.1
              port: metrics
              path: /healthz
            initialDelaySeconds: 10
            periodSeconds: 20
            timeoutSeconds: 5
            failureThreshold: 3
          readinessProbe:
            {{- if $windows }}
            # csi-node-proxyctl health opens every pipe and asks its gRPC
            # health service; it exits 0 only when every group asked for is
            # served (what /readyz answers too).
            exec:
              command:
                - '%CONTAINER_SANDBOX_MOUNT_POINT%\csi-node-proxyctl.exe'
                - health
                - --timeout=5s
                {{- range (include "csi-node-proxy.groups" $r | splitList ",") }}
                {{- if . }}
                - --group={{ . }}
                {{- end }}
                {{- end }}
            timeoutSeconds: 10
            {{- else }}
            # /readyz: every endpoint accepts connections and answers its
            # health service.
            httpGet:
              host: 127.0.0.1
              port: metrics
              path: /readyz
            timeoutSeconds: 5
            {{- end }}
            periodSeconds: 10
            failureThreshold: 3
          {{- with $o.resources }}
          resources:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          {{- if or (not $windows) $v.policy.enabled $v.auditLog.enabled }}
          volumeMounts:
            {{- if not $windows }}
            # Volumes are staged and published here; what the proxy mounts
            # must appear in the host and so in every pod.
            - name: kubelet-dir
              mountPath: {{ $kubelet }}
              mountPropagation: Bidirectional
            {{- range $i, $dir := $o.workingDirs }}
            - name: working-dir-{{ $i }}
              mountPath: {{ $dir }}
              mountPropagation: Bidirectional
            {{- end }}
            # The SMB backend's share mounts, linked from kubelet paths.
            - name: state-dir
              mountPath: /var/lib/csi-node-proxy
              mountPropagation: Bidirectional
            # The sockets, visible on the host for node plugins to mount.
            - name: socket-dir
              mountPath: {{ $v.linux.socketDir }}
            - name: dev
              mountPath: /dev
              mountPropagation: HostToContainer
            - name: sys
              mountPath: /sys
              mountPropagation: HostToContainer
            - name: dbus
              mountPath: /run/dbus
            - name: iscsi-etc
              mountPath: /etc/iscsi
            - name: iscsi-lib
              mountPath: /var/lib/iscsi
            {{- with $v.linux.criEndpoint }}
            # The directory of the container runtime's CRI socket, to learn
            # callers' pods: a new socket made by a restarted runtime shows
            # through a directory mount, not through a file mount.
            - name: cri-socket-dir
              mountPath: {{ dir (trimPrefix "unix://" .) }}
              readOnly: true
              # The runtime's per-container mounts below it must unmount
              # here when they do on the host.
              mountPropagation: HostToContainer
            {{- end }}
            {{- end }}
            {{- if $v.policy.enabled }}
            - name: policy
              mountPath: {{ $policyDir }}
              readOnly: true
            {{- end }}
            {{- if $v.auditLog.enabled }}
            # The node's audit directory, created by the kubelet.
            - name: audit-dir
              mountPath: {{ $auditDir }}
            {{- end }}
          {{- end }}
      {{- if or (not $windows) $v.policy.enabled $v.auditLog.enabled }}
      volumes:
        {{- if not $windows }}
        - name: kubelet-dir
          hostPath:
            path: {{ $kubelet }}
            type: Directory
        {{- range $i, $dir := $o.workingDirs }}
        - name: working-dir-{{ $i }}
          hostPath:
            path: {{ $dir }}
            type: DirectoryOrCreate
        {{- end }}
        - name: state-dir
          hostPath:
            path: /var/lib/csi-node-proxy
            type: DirectoryOrCreate
        - name: socket-dir
          hostPath:
            path: {{ $v.linux.socketDir }}
            type: DirectoryOrCreate
        - name: dev
          hostPath:
            path: /dev
            type: Directory
        - name: sys
          hostPath:
            path: /sys
            type: Directory
        - name: dbus
          hostPath:
            path: /run/dbus
            type: DirectoryOrCreate
        - name: iscsi-etc
          hostPath:
            path: /etc/iscsi
            type: DirectoryOrCreate
        - name: iscsi-lib
          hostPath:
            path: /var/lib/iscsi
            type: DirectoryOrCreate
        {{- with $v.linux.criEndpoint }}
        - name: cri-socket-dir
          hostPath:
            path: {{ dir (trimPrefix "unix://" .) }}
            type: Directory
        {{- end }}
        {{- end }}
        {{- if $v.policy.enabled }}
        - name: policy
          configMap:
            name: {{ include "csi-node-proxy.fullname" $r }}-policy
            # Root-owned and read-only: the daemon refuses a policy file
            # others could write.
            defaultMode: 0444
        {{- end }}
        {{- if $v.auditLog.enabled }}
        - name: audit-dir
          hostPath:
            path: {{ $auditDir | quote }}
            type: DirectoryOrCreate
        {{- end }}
      {{- end }}
{{- end -}}

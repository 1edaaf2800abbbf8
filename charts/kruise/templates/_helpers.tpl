{{/* Namespace of every namespaced object. */}}
{{- define "kruise.namespace" -}}
{{- .Values.installation.namespace -}}
{{- end -}}

{{/* helm.sh/chart value: name-version, valid as a label. */}}
{{- define "kruise.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels every object carries. */}}
{{- define "kruise.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kruise
helm.sh/chart: {{ include "kruise.chart" . }}
{{- end -}}

{{/* Selector labels. They are immutable on a Deployment/DaemonSet, so they never change. */}}
{{- define "kruise.manager.selectorLabels" -}}
control-plane: controller-manager
{{- end -}}
{{- define "kruise.daemon.selectorLabels" -}}
control-plane: daemon
{{- end -}}

{{/*
An image reference from {registry, repository, tag}. The top-level imageRegistry, when set,
replaces the registry (air-gapped mirrors); an empty tag is the chart's appVersion.
Call with (dict "image" .Values.manager.image "root" $).
*/}}
{{- define "kruise.image" -}}
{{- $registry := .image.registry | default "" -}}
{{- if .root.Values.imageRegistry -}}{{- $registry = .root.Values.imageRegistry -}}{{- end -}}
{{- $tag := .image.tag | default .root.Chart.AppVersion | toString -}}
{{- if $registry -}}
{{- printf "%s/%s:%s" (trimSuffix "/" $registry) .image.repository $tag -}}
{{- else -}}
{{- printf "%s:%s" .image.repository $tag -}}
{{- end -}}
{{- end -}}

{{- define "kruise.manager.image" -}}
{{- include "kruise.image" (dict "image" .Values.manager.image "root" .) -}}
{{- end -}}

{{- define "kruise.daemon.image" -}}
{{- include "kruise.image" (dict "image" .Values.daemon.image "root" .) -}}
{{- end -}}

{{/* The hook image: each empty field falls back to the manager image's. */}}
{{- define "kruise.hook.image" -}}
{{- $m := .Values.manager.image -}}
{{- $h := .Values.hook.image -}}
{{- $img := dict "registry" ($h.registry | default $m.registry) "repository" ($h.repository | default $m.repository) "tag" ($h.tag | default $m.tag) -}}
{{- include "kruise.image" (dict "image" $img "root" .) -}}
{{- end -}}

{{/*
"true" when featureGates sets KruiseDaemon to false, in any spelling strconv.ParseBool accepts.
*/}}
{{- define "kruise.daemonGateOff" -}}
{{- range $gate := splitList "," .Values.featureGates -}}
{{- $kv := splitList "=" (trim $gate) -}}
{{- if and (eq (len $kv) 2) (eq (trim (first $kv)) "KruiseDaemon") (has (trim (last $kv)) (list "false" "False" "FALSE" "0" "f" "F")) -}}
true
{{- end -}}
{{- end -}}
{{- end -}}

{{/* "true" when the daemon is rendered. */}}
{{- define "kruise.daemonEnabled" -}}
{{- if and .Values.daemon.enabled (not (include "kruise.daemonGateOff" .)) -}}
true
{{- end -}}
{{- end -}}

{{- define "kruise.imagePullSecrets" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Names of the CRDs in files/crds, for RBAC resourceNames: <group>_<plural>.yaml -> <plural>.<group>. */}}
{{- define "kruise.crdNames" -}}
{{- range $path, $_ := .Files.Glob "files/crds/*.yaml" }}
{{- $parts := splitList "_" (base $path | trimSuffix ".yaml") }}
- {{ printf "%s.%s" (index $parts 1) (index $parts 0) }}
{{- end }}
{{- end -}}

{{/* The restricted container security context every container of the chart runs with. */}}
{{- define "kruise.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

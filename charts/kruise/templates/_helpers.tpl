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
app.kubernetes.io/name: {{ .Chart.Name | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
app.kubernetes.io/part-of: kruise
helm.sh/chart: {{ include "kruise.chart" . | quote }}
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
replaces the registry (air-gapped mirrors); an empty tag is the chart's appVersion, and a tag
sha256:<hex> is a digest (repository@sha256:<hex>). The result is a plain string: callers quote it.
Call with (dict "image" .Values.manager.image "root" $).
*/}}
{{- define "kruise.image" -}}
{{- $registry := .image.registry | default "" -}}
{{- if .root.Values.imageRegistry -}}{{- $registry = .root.Values.imageRegistry -}}{{- end -}}
{{- $tag := .image.tag | default .root.Chart.AppVersion | toString -}}
{{- $sep := ternary "@" ":" (hasPrefix "sha256:" $tag) -}}
{{- if $registry -}}
{{- printf "%s/%s%s%s" (trimSuffix "/" $registry) .image.repository $sep $tag -}}
{{- else -}}
{{- printf "%s%s%s" .image.repository $sep $tag -}}
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

{{/*
The manager's feature gates: featureGates, and KruiseDaemon=false whenever daemon.enabled is false
(replacing any KruiseDaemon entry), so that the manager refuses what only a daemon can carry out
(ContainerRecreateRequests, ImagePullJobs) instead of accepting work that would never run.
*/}}
{{- define "kruise.managerFeatureGates" -}}
{{- if .Values.daemon.enabled -}}
{{- .Values.featureGates -}}
{{- else -}}
{{- $gates := list -}}
{{- range $gate := splitList "," .Values.featureGates -}}
{{- $kv := splitList "=" (trim $gate) -}}
{{- if and (trim $gate) (ne (trim (first $kv)) "KruiseDaemon") -}}
{{- $gates = append $gates (trim $gate) -}}
{{- end -}}
{{- end -}}
{{- join "," (append $gates "KruiseDaemon=false") -}}
{{- end -}}
{{- end -}}

{{/*
"true" when featureGates sets ResourceDistributionGate to true, in any spelling strconv.ParseBool
accepts; 1.8's default is false.
*/}}
{{- define "kruise.resourceDistributionGateOn" -}}
{{- range $gate := splitList "," .Values.featureGates -}}
{{- $kv := splitList "=" (trim $gate) -}}
{{- if and (eq (len $kv) 2) (eq (trim (first $kv)) "ResourceDistributionGate") (has (trim (last $kv)) (list "true" "True" "TRUE" "1" "t" "T")) -}}
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


{{/*
Checks across values that the schema cannot express, for the installer and plain helm alike: each
one would otherwise render objects on which the manager cannot start or the PDB never allows an
eviction. Included once, by manager-deployment.yaml; it renders nothing.
*/}}
{{- define "kruise.validateValues" -}}
{{- $m := .Values.manager -}}
{{- $ports := dict "manager.metricsPort" $m.metricsPort "manager.healthProbePort" $m.healthProbePort "manager.webhookPort" $m.webhookPort -}}
{{- if and $m.hostNetwork (include "kruise.daemonEnabled" .) -}}
{{- /* Both on the host network: the daemon's port shares the node with the manager's. */ -}}
{{- $_ := set $ports "daemon.port" .Values.daemon.port -}}
{{- end -}}
{{- $seen := dict -}}
{{- range $name := keys $ports | sortAlpha -}}
{{- $port := index $ports $name | int64 | toString -}}
{{- with index $seen $port -}}
{{- fail (printf "%s and %s are both %s: each port must differ, or the manager fails with \"address already in use\"" . $name $port) -}}
{{- end -}}
{{- $_ := set $seen $port $name -}}
{{- end -}}
{{- $pdb := $m.podDisruptionBudget -}}
{{- if and $pdb.enabled (not (kindIs "string" $pdb.minAvailable)) -}}
{{- if gt (int64 $pdb.minAvailable) (int64 $m.replicas) -}}
{{- fail (printf "manager.podDisruptionBudget.minAvailable %d is above manager.replicas %d: the budget could never be met; use at most %d" (int64 $pdb.minAvailable) (int64 $m.replicas) (int64 $m.replicas)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

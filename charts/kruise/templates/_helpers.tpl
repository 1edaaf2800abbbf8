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
The feature gates both binaries get: featureGates, with ImagePullJobGate=true added while the daemon
runs and featureGates does not name that gate, so that image pre-pull (ImagePullJob,
ImageListPullJob and AdvancedCronJob's scheduled pre-pull) works after a default install. Without
the daemon the gate stays as given; the manager turns it off with KruiseDaemon.
*/}}
{{- define "kruise.featureGates" -}}
{{- $gates := list -}}
{{- $named := false -}}
{{- range $gate := splitList "," .Values.featureGates -}}
{{- if trim $gate -}}
{{- $gates = append $gates (trim $gate) -}}
{{- if eq (trim (first (splitList "=" (trim $gate)))) "ImagePullJobGate" -}}{{- $named = true -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- if and (include "kruise.daemonEnabled" .) (not $named) -}}
{{- $gates = append $gates "ImagePullJobGate=true" -}}
{{- end -}}
{{- join "," $gates -}}
{{- end -}}

{{/*
The manager's feature gates: kruise.featureGates, and KruiseDaemon=false whenever daemon.enabled is
false (replacing any KruiseDaemon entry), so that the manager refuses what only a daemon can carry
out (ContainerRecreateRequests, ImagePullJobs) instead of accepting work that would never run.
*/}}
{{- define "kruise.managerFeatureGates" -}}
{{- if .Values.daemon.enabled -}}
{{- include "kruise.featureGates" . -}}
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
"true" when featureGates turns the gate .gate on, in any spelling strconv.ParseBool accepts.
Call with (dict "root" . "gate" "Name").
*/}}
{{- define "kruise.gateOn" -}}
{{- $name := .gate -}}
{{- range $gate := splitList "," .root.Values.featureGates -}}
{{- $kv := splitList "=" (trim $gate) -}}
{{- if and (eq (len $kv) 2) (eq (trim (first $kv)) $name) (has (trim (last $kv)) (list "true" "True" "TRUE" "1" "t" "T")) -}}
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
{{- include "kruise.checkFeatureGates" . -}}
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
{{- include "kruise.checkResources" (dict "path" "manager.resources" "resources" $m.resources) -}}
{{- include "kruise.checkResources" (dict "path" "daemon.resources" "resources" .Values.daemon.resources) -}}
{{- include "kruise.checkResources" (dict "path" "server.resources" "resources" .Values.server.resources) -}}
{{- $pdb := $m.podDisruptionBudget -}}
{{- if and $pdb.enabled (not (kindIs "string" $pdb.minAvailable)) -}}
{{- if gt (int64 $pdb.minAvailable) (int64 $m.replicas) -}}
{{- fail (printf "manager.podDisruptionBudget.minAvailable %d is above manager.replicas %d: the budget could never be met; use at most %d" (int64 $pdb.minAvailable) (int64 $m.replicas) (int64 $m.replicas)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Refuses featureGates naming a gate the add-on does not know, or turning on one it does not carry
out, so that plain helm users see the mistake at install time rather than a manager that will
not start. The lists follow features/features.go (a test keeps them equal).
*/}}
{{- define "kruise.checkFeatureGates" -}}
{{- $known := list "CloneSetEventHandlerOptimization" "CloneSetPartitionRollback" "CloneSetShortHash" "DaemonWatchingPod" "DeletionProtectionForCRDCascadingGate" "EnableExternalCerts" "EnablePodProbeMarkerOnServerless" "EnhancedLivenessProbe" "ForceDeleteTimeoutExpectationGate" "ImagePullJobGate" "InPlaceUpdateEnvFromMetadata" "InPlaceWorkloadVerticalScaling" "KruiseDaemon" "KruisePodReadinessGate" "PodIndexLabel" "PodProbeMarkerGate" "PodUnavailableBudgetDeleteGate" "PodUnavailableBudgetUpdateGate" "PodWebhook" "PreDownloadImageForDaemonSetUpdate" "PreDownloadImageForInPlaceUpdate" "PreparingUpdateAsUpdate" "RecreatePodWhenChangeVCTInCloneSetGate" "ResourceDistributionGate" "ResourcesDeletionProtection" "SidecarSetPatchPodMetadataDefaultsAllowed" "SidecarTerminator" "StatefulSetAutoDeletePVC" "StatefulSetAutoResizePVCGate" "StatefulSetStartOrdinal" "TemplateNoDefaults" "WorkloadSpread" -}}
{{- $unsupported := dict "CloneSetEventHandlerOptimization" "the CloneSet pod event filter is not built; every pod change queues its CloneSet" "CloneSetPartitionRollback" "rolling updated CloneSet pods back to the current revision when the partition grows is not built" "EnableExternalCerts" "the manager always makes and rotates its own webhook certificates" "EnablePodProbeMarkerOnServerless" "PodProbeMarker on serverless (virtual-kubelet) pods is not built" "EnhancedLivenessProbe" "taking liveness probes over from the kubelet is not built" "InPlaceWorkloadVerticalScaling" "resizing workload pods' resources in place is not built" "PreDownloadImageForDaemonSetUpdate" "Advanced DaemonSet does not pre-pull the images of an update" "PreparingUpdateAsUpdate" "counting PreparingUpdate pods as updated while scaling is not built" "RecreatePodWhenChangeVCTInCloneSetGate" "recreating CloneSet pods when volumeClaimTemplates change is not built" "SidecarTerminator" "stopping the sidecars of a pod whose main containers have exited is not built" -}}
{{- range $gate := splitList "," .Values.featureGates -}}
{{- if trim $gate -}}
{{- $kv := splitList "=" (trim $gate) -}}
{{- $name := trim (first $kv) -}}
{{- if not (has $name $known) -}}
{{- fail (printf "featureGates: unknown feature gate %q; the known gates are %s" $name (join ", " $known)) -}}
{{- end -}}
{{- if and (hasKey $unsupported $name) (has (trim (last $kv)) (list "true" "True" "TRUE" "1" "t" "T")) -}}
{{- fail (printf "featureGates: %s=true is not supported by this add-on: %s; remove it or set it to false" $name (get $unsupported $name)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
A quantity's value in its base unit (cores, bytes) as a float, from what the schema admits: a
non-negative number, or a decimal string with at most one suffix. Thousandths divide, so that 300m
and 0.3 are the same float.
*/}}
{{- define "kruise.quantityValue" -}}
{{- if kindIs "string" . -}}
{{- $num := regexFind "^([0-9]+(\\.[0-9]*)?|\\.[0-9]+)" . -}}
{{- $suffix := trimPrefix $num . -}}
{{- if eq $suffix "m" -}}
{{- divf (float64 $num) 1000.0 -}}
{{- else -}}
{{- $scale := dict "" 1.0 "k" 1e3 "M" 1e6 "G" 1e9 "T" 1e12 "P" 1e15 "E" 1e18 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "Pi" 1125899906842624.0 "Ei" 1152921504606846976.0 -}}
{{- mulf (float64 $num) (get $scale $suffix) -}}
{{- end -}}
{{- else -}}
{{- float64 . -}}
{{- end -}}
{{- end -}}

{{/*
Refuses a container's resources beyond what a node gives (CPU up to 64, memory up to 64Gi,
ephemeral-storage up to 1Ti; limits from 10m CPU and 16Mi, below which the container cannot start)
and a request above its limit, which the apiserver refuses only when Helm applies the pod template.
Call with (dict "path" "manager.resources" "resources" .Values.manager.resources).
*/}}
{{- define "kruise.checkResources" -}}
{{- $path := .path -}}
{{- $res := .resources | default dict -}}
{{- $requests := get $res "requests" | default dict -}}
{{- $limits := get $res "limits" | default dict -}}
{{- /* [request min, request max, limit min, limit max] per resource */ -}}
{{- $bounds := dict "cpu" (list "0" "64" "10m" "64") "memory" (list "0" "64Gi" "16Mi" "64Gi") "ephemeral-storage" (list "0" "1Ti" "16Mi" "1Ti") -}}
{{- range $kind, $list := dict "requests" $requests "limits" $limits -}}
{{- $i := ternary 0 2 (eq $kind "requests") -}}
{{- range $name, $q := $list -}}
{{- $lo := index (get $bounds $name) $i -}}
{{- $hi := index (get $bounds $name) (add1 $i) -}}
{{- $v := include "kruise.quantityValue" $q | float64 -}}
{{- if or (lt $v (include "kruise.quantityValue" $lo | float64)) (gt $v (include "kruise.quantityValue" $hi | float64)) -}}
{{- fail (printf "%s.%s.%s %v is out of range: use %s to %s" $path $kind $name $q $lo $hi) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $name, $req := $requests -}}
{{- if hasKey $limits $name -}}
{{- $lim := get $limits $name -}}
{{- /* The margin only absorbs float rounding between notations (1000m and 1); a byte or a
millicore above the limit is far above it. */ -}}
{{- if gt (include "kruise.quantityValue" $req | float64) (mulf (include "kruise.quantityValue" $lim | float64) 1.0000000000001) -}}
{{- fail (printf "%s.requests.%s %v is above %s.limits.%s %v: the apiserver refuses a request above its limit; lower the request or raise the limit" $path $name $req $path $name $lim) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

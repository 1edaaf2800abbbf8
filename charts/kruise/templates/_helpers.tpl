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
The chart names no registry of its own, so an image without one (no imageRegistry, no
<role>.image.registry, no registry host at the head of its repository) fails the render naming
imageRegistry, instead of deploying an image that no node can pull.
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
{{- $parts := splitList "/" .image.repository -}}
{{- if not (and (gt (len $parts) 1) (or (contains "." (first $parts)) (eq (first $parts) "localhost"))) -}}
{{- fail (printf "imageRegistry is not set: set imageRegistry (the registry that serves %s%s%s), or install from a bundle (kruise-addon install --bundle <file> --registry <mirror>), whose chart names its mirror" .image.repository $sep $tag) -}}
{{- end -}}
{{- printf "%s%s%s" .image.repository $sep $tag -}}
{{- end -}}
{{- end -}}

{{/*
OpenKruise 1.8's own images, which a values file written for 1.8 names (its default names
openkruise/kruise-manager and openkruise/kruise-helm-hook). They do not run this chart's commands,
so the chart runs its own image instead: such a repository, and the tag beside it, count as unset.
*/}}
{{- define "kruise.upstreamImage" -}}
{{- $repo := . | default "" -}}
{{- range $name := list "openkruise/kruise-manager" "openkruise/kruise-daemon" "openkruise/kruise-helm-hook" -}}
{{- if or (eq $repo $name) (hasSuffix (printf "/%s" $name) $repo) -}}true{{- end -}}
{{- end -}}
{{- end -}}

{{/* The manager image, with 1.8's own image name replaced by this chart's. */}}
{{- define "kruise.manager.imageValues" -}}
{{- $img := .Values.manager.image -}}
{{- if include "kruise.upstreamImage" $img.repository -}}
{{- $img = dict "registry" ($img.registry | default "") "repository" "kruise-addon/kruise-manager" "tag" "" -}}
{{- end -}}
{{- toJson $img -}}
{{- end -}}

{{- define "kruise.manager.image" -}}
{{- include "kruise.image" (dict "image" (include "kruise.manager.imageValues" . | fromJson) "root" .) -}}
{{- end -}}

{{- define "kruise.daemon.image" -}}
{{- include "kruise.image" (dict "image" .Values.daemon.image "root" .) -}}
{{- end -}}

{{/*
The hook image: hook.image, or OpenKruise 1.8's helmHooks.image (its repository may begin with a
registry host; 1.8's own hook image counts as unset); each empty field falls back to the manager
image's.
*/}}
{{- define "kruise.hook.image" -}}
{{- $m := include "kruise.manager.imageValues" . | fromJson -}}
{{- $h := .Values.hook.image -}}
{{- $legacy := (.Values.helmHooks | default dict).image | default dict -}}
{{- $lrepo := $legacy.repository | default "" -}}
{{- if and $lrepo (not (include "kruise.upstreamImage" $lrepo)) -}}
{{- $lreg := "" -}}
{{- $first := first (splitList "/" $lrepo) -}}
{{- if and (gt (len (splitList "/" $lrepo)) 1) (or (contains "." $first) (contains ":" $first) (eq $first "localhost")) -}}
{{- $lreg = $first -}}
{{- $lrepo = trimPrefix (printf "%s/" $first) $lrepo -}}
{{- end -}}
{{- if and $h.repository (ne (printf "%s/%s:%s" ($h.registry | default "") $h.repository ($h.tag | default "")) (printf "%s/%s:%s" $lreg $lrepo ($legacy.tag | default ""))) -}}
{{- fail (printf "hook.image and helmHooks.image (OpenKruise 1.8's name for it) name different images: set only one of them") -}}
{{- end -}}
{{- $h = dict "registry" $lreg "repository" $lrepo "tag" ($legacy.tag | default "") -}}
{{- end -}}
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
"true" when the feature gate .gate is on: featureGates sets it, in any spelling strconv.ParseBool
accepts, or else its default .default (false when not given) is true.
Call with (dict "root" . "gate" "Name") or (dict "root" . "gate" "Name" "default" true).
*/}}
{{- define "kruise.gateOn" -}}
{{- $on := .default | default false -}}
{{- range $gate := splitList "," .root.Values.featureGates -}}
{{- $kv := splitList "=" (trim $gate) -}}
{{- if and (eq (len $kv) 2) (eq (trim (first $kv)) $.gate) -}}
{{- $on = has (trim (last $kv)) (list "true" "True" "TRUE" "1" "t" "T") -}}
{{- end -}}
{{- end -}}
{{- if $on -}}true{{- end -}}
{{- end -}}

{{/* "true" when the daemon is rendered. */}}
{{- define "kruise.daemonEnabled" -}}
{{- if and .Values.daemon.enabled (not (include "kruise.daemonGateOff" .)) -}}
true
{{- end -}}
{{- end -}}

{{/*
A value by dotted path, as a string; empty when absent or null. Call with (dict "v" .Values "path" "a.b").
*/}}
{{- define "kruise.dig" -}}
{{- $v := .v -}}
{{- $found := true -}}
{{- range $k := splitList "." .path -}}
{{- if and $found (kindIs "map" $v) (hasKey $v $k) -}}
{{- $v = index $v $k -}}
{{- else -}}
{{- $found = false -}}
{{- end -}}
{{- end -}}
{{- if and $found (not (kindIs "invalid" $v)) -}}
{{- if kindIs "string" $v -}}{{- $v -}}{{- else -}}{{- toJson $v -}}{{- end -}}
{{- end -}}
{{- end -}}

{{/*
A value this chart and OpenKruise 1.8's chart name differently: ours, else 1.8's (.theirs), else
.default; both set to different values fails the render naming both. Call with (dict "root" .
"ours" "manager.logLevel" "theirs" "manager.log.level" "default" 4). The result is a string.
*/}}
{{- define "kruise.alias" -}}
{{- $ours := include "kruise.dig" (dict "v" .root.Values "path" .ours) -}}
{{- $theirs := include "kruise.dig" (dict "v" .root.Values "path" .theirs) -}}
{{- if and $ours $theirs (ne $ours $theirs) -}}
{{- fail (printf "%s is %s and %s is %s: they set the same thing (%s is OpenKruise 1.8's name for %s); set only one of them" .ours $ours .theirs $theirs .theirs .ours) -}}
{{- end -}}
{{- $ours | default $theirs | default (toString .default) -}}
{{- end -}}

{{- define "kruise.manager.logLevel" -}}{{- include "kruise.alias" (dict "root" . "ours" "manager.logLevel" "theirs" "manager.log.level" "default" 4) -}}{{- end -}}
{{- define "kruise.manager.metricsPort" -}}{{- include "kruise.alias" (dict "root" . "ours" "manager.metricsPort" "theirs" "manager.metrics.port" "default" 8080) -}}{{- end -}}
{{- define "kruise.manager.healthProbePort" -}}{{- include "kruise.alias" (dict "root" . "ours" "manager.healthProbePort" "theirs" "manager.healthProbe.port" "default" 8000) -}}{{- end -}}
{{- define "kruise.manager.webhookPort" -}}{{- include "kruise.alias" (dict "root" . "ours" "manager.webhookPort" "theirs" "manager.webhook.port" "default" 9876) -}}{{- end -}}
{{- define "kruise.daemon.logLevel" -}}{{- include "kruise.alias" (dict "root" . "ours" "daemon.logLevel" "theirs" "daemon.log.level" "default" 4) -}}{{- end -}}

{{/* ServiceAccount annotations (serviceAccount.annotations), for the manager's and the daemon's. */}}
{{- define "kruise.serviceAccountAnnotations" -}}
{{- with (.Values.serviceAccount | default dict).annotations }}
annotations:
{{- toYaml . | nindent 2 }}
{{- end }}
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
{{- include "kruise.checkUnsupported" . -}}
{{- $m := .Values.manager -}}
{{- $ports := dict "manager.metricsPort" (include "kruise.manager.metricsPort" .) "manager.healthProbePort" (include "kruise.manager.healthProbePort" .) "manager.webhookPort" (include "kruise.manager.webhookPort" .) -}}
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
Refuses the keys of OpenKruise 1.8's values that name something this add-on does not do, each
with what to do instead; their defaults (empty, false) pass, so 1.8's own values file installs.
*/}}
{{- define "kruise.checkUnsupported" -}}
{{- if and (.Values.externalCerts | default dict).annotations (not (include "kruise.gateOn" (dict "root" . "gate" "EnableExternalCerts"))) -}}
{{- fail "externalCerts.annotations: a CA injector's annotations are set, but featureGates does not turn EnableExternalCerts on, so the manager would make its own certificate and write every caBundle over the injected one; add EnableExternalCerts=true to featureGates (the issuer then writes Secret kruise-webhook-certs: ca.crt, tls.crt, tls.key), or remove externalCerts.annotations" -}}
{{- end -}}
{{- if eq (.Values.manager.loggingFormat | default "") "json" -}}
{{- fail "manager.loggingFormat: json is not supported: the manager logs klog text; remove manager.loggingFormat or set it to text" -}}
{{- end -}}
{{- if (.Values.daemon.credentialProvider | default dict).enable -}}
{{- fail "daemon.credentialProvider.enable: the daemon runs no kubelet credential provider plugins; give ImagePullJobs their pull secrets (spec.pullSecrets) and set daemon.credentialProvider.enable to false" -}}
{{- end -}}
{{- end -}}

{{/*
Refuses featureGates naming a gate the add-on does not know, so that plain helm users see the
mistake at install time rather than a manager that will not start. The list follows features/features.go (a test keeps them equal).
*/}}
{{- define "kruise.checkFeatureGates" -}}
{{- $known := list "CloneSetEventHandlerOptimization" "CloneSetPartitionRollback" "CloneSetShortHash" "DaemonWatchingPod" "DeletionProtectionForCRDCascadingGate" "EnableExternalCerts" "EnablePodProbeMarkerOnServerless" "EnhancedLivenessProbe" "ForceDeleteTimeoutExpectationGate" "ImagePullJobGate" "InPlaceUpdateEnvFromMetadata" "InPlaceWorkloadVerticalScaling" "KruiseDaemon" "KruisePodReadinessGate" "PodIndexLabel" "PodProbeMarkerGate" "PodUnavailableBudgetDeleteGate" "PodUnavailableBudgetUpdateGate" "PodWebhook" "PreDownloadImageForDaemonSetUpdate" "PreDownloadImageForInPlaceUpdate" "PreparingUpdateAsUpdate" "RecreatePodWhenChangeVCTInCloneSetGate" "ResourceDistributionGate" "ResourcesDeletionProtection" "SidecarSetPatchPodMetadataDefaultsAllowed" "SidecarTerminator" "StatefulSetAutoDeletePVC" "StatefulSetAutoResizePVCGate" "StatefulSetStartOrdinal" "TemplateNoDefaults" "WorkloadSpread" -}}
{{- range $gate := splitList "," .Values.featureGates -}}
{{- if trim $gate -}}
{{- $kv := splitList "=" (trim $gate) -}}
{{- $name := trim (first $kv) -}}
{{- if not (has $name $known) -}}
{{- fail (printf "featureGates: unknown feature gate %q; the known gates are %s" $name (join ", " $known)) -}}
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

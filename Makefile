# kruise-addon: workloads add-on and its installer.
SHELL := /usr/bin/env bash -o pipefail
.DEFAULT_GOAL := help

CONTROLLER_GEN_VERSION ?= v0.23.0
TESTBIN_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/kruise-testbin
CONTROLLER_GEN ?= $(TESTBIN_CACHE)/tools/controller-gen-$(CONTROLLER_GEN_VERSION)
CRD_DIR := charts/kruise/files/crds
WEBHOOKS_FILE := charts/kruise/files/webhooks.yaml
# Packages start their own control planes; the chart suites run for minutes on a busy 2-core machine.
GO_TEST_FLAGS ?= -timeout 30m
BENCH_TIME ?= 3s

##@ General

.PHONY: help
help: ## List every target.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  %-14s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Generation

$(CONTROLLER_GEN):
	TOOLS_ONLY=1 CONTROLLER_GEN_VERSION=$(CONTROLLER_GEN_VERSION) TESTBIN_CACHE=$(TESTBIN_CACHE) ./scripts/testbin/build.sh >/dev/null

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy functions for apis/.
	$(CONTROLLER_GEN) object paths=./apis/...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate the CRDs and the webhook table into the chart (charts/kruise/files).
	rm -rf $(CRD_DIR) && mkdir -p $(CRD_DIR)
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./apis/... output:crd:artifacts:config=$(CRD_DIR)
	go run ./controllers/webhook/configuration/gen $(WEBHOOKS_FILE)

.PHONY: verify-gen
verify-gen: ## Regenerate deepcopy, CRDs and the webhook table and fail if they differ from the files in the tree.
	@before=$$(mktemp -d) && trap 'rm -rf "$$before"' EXIT && \
	  tar -cf "$$before/gen.tar" $(CRD_DIR) $(WEBHOOKS_FILE) $$(find apis -name 'zz_generated.*.go') && \
	  $(MAKE) -s generate manifests >/dev/null && \
	  mkdir "$$before/tree" && tar -xf "$$before/gen.tar" -C "$$before/tree" && \
	  mkdir "$$before/now" && tar -cf - $(CRD_DIR) $(WEBHOOKS_FILE) $$(find apis -name 'zz_generated.*.go') | tar -xf - -C "$$before/now" && \
	  if ! diff -ru "$$before/tree" "$$before/now" >"$$before/diff"; then \
	    echo "generated files are stale; run 'make generate manifests' and commit the result:"; \
	    diff -rq "$$before/tree" "$$before/now" | sed "s#$$before/##g"; exit 1; fi
	@echo "generated files are up to date"

##@ Local control plane

DEV_DIR ?= $(or $(TMPDIR),/tmp)/kruise-dev

.PHONY: dev-up
dev-up: ## Start etcd + kube-apiserver on loopback with our CRDs installed; prints the KUBECONFIG export.
	@./scripts/controlplane/up.sh $(DEV_DIR)

.PHONY: install-local
install-local: ## Main job: single-node cluster (real kubelet, root), images bundled and mirrored, install --bundle, seed CloneSet 5/5 ready; without root/containerd, a control plane without nodes.
	@DEV_DIR=$(DEV_DIR) ./scripts/local/up.sh

.PHONY: local-down
local-down: ## Stop what install-local started (the single-node cluster, or the control plane it fell back to).
	@DEV_DIR=$(DEV_DIR) ./scripts/local/down.sh

.PHONY: dev-down
dev-down: ## Stop the local control plane and remove its work dir.
	@./scripts/controlplane/down.sh $(DEV_DIR)

##@ End to end on a real kubelet

E2E_DIR ?= /tmp/kruise-e2e
E2E_NODES ?= 1
REGISTRY ?=
IMAGES ?= kruise-manager,kruise-daemon,pause
PLATFORMS ?=

.PHONY: e2e-up
e2e-up: ## Single-node cluster: loopback registry, containerd, control plane, real kubelet (root); E2E_NODES=3 starts three real nodes; prints the KUBECONFIG export.
	@E2E_NODES=$(E2E_NODES) ./scripts/e2e-cluster/up.sh $(E2E_DIR)

.PHONY: e2e-down
e2e-down: ## Stop the e2e cluster; checks that no process, mount, cgroup, link or NAT rule is left.
	@./scripts/e2e-cluster/down.sh $(E2E_DIR)

.PHONY: images
images: ## Build the manager, daemon and pause images without Docker into bin/images (OCI layout); REGISTRY=127.0.0.1:<port> also pushes; PLATFORMS=linux/amd64,linux/arm64 builds an index per image.
	go run ./scripts/images -out bin/images -only $(IMAGES) $(if $(REGISTRY),-registry $(REGISTRY)) $(if $(PLATFORMS),-platforms $(PLATFORMS))

BUNDLE ?= bin/kruise-addon-bundle.tar

.PHONY: bundle
bundle: ## Air-gap bundle: the manager, daemon and console API (server.enabled) images (for PLATFORMS, default this machine's) and the chart in one deterministic archive, $(BUNDLE), then bundle verify; SIGN_KEY=<pem> signs it.
	go run ./scripts/images -out bin/images -only kruise-manager,kruise-daemon,kruise-addon $(if $(PLATFORMS),-platforms $(PLATFORMS))
	go run ./cmd/kruise-addon bundle create --images bin/images --server --out $(BUNDLE) $(if $(SIGN_KEY),--sign-key $(SIGN_KEY))
	go run ./cmd/kruise-addon bundle verify $(BUNDLE)

CHART_REPO ?= bin/chart-repo

.PHONY: chart-repo
chart-repo: ## Static Helm repository in $(CHART_REPO): the packaged chart naming CHART_REGISTRY (the registry the images are mirrored to; required) and index.yaml (serve it; helm repo add works).
	@test -n "$(CHART_REGISTRY)" || { echo "set CHART_REGISTRY to the registry the images are mirrored to, e.g. make chart-repo CHART_REGISTRY=registry.internal:5000/kruise" >&2; exit 2; }
	go run ./cmd/kruise-addon bundle chart-repo --out $(CHART_REPO) --registry $(CHART_REGISTRY)

.PHONY: e2e
e2e: ## e2e-up, images, kruise-addon install and the scenarios in test/e2e, then e2e-down (always); logs in bin/e2e-logs.
	@./scripts/e2e-cluster/e2e.sh $(E2E_DIR)

E2E_MULTI_NODES ?= 3

.PHONY: e2e-multinode
e2e-multinode: ## Like e2e on three real nodes (E2E_MULTI_NODES) in as many zones (one containerd and kubelet each): the multi-node scenarios (build tag multinode); logs in bin/e2e-multinode-logs.
	@E2E_NODES=$(E2E_MULTI_NODES) E2E_DAEMON=0 E2E_TAGS=e2e,multinode E2E_RUN=$${E2E_RUN:-TestMultiNode} \
	  E2E_LOGS_DIR=$(CURDIR)/bin/e2e-multinode-logs ./scripts/e2e-cluster/e2e.sh $(E2E_DIR)

##@ Build and check

.PHONY: build
build: ## Compile every package and build the binaries under cmd/ into bin/.
	go build ./...
	@mains=$$(go list -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' ./cmd/...); \
	  if [ -n "$$mains" ]; then go build -o bin/ $$mains; else echo "no binaries under cmd/ yet"; fi

.PHONY: kubectl-kruise
kubectl-kruise: ## Build the kubectl plugin into bin/kubectl-kruise (copy it onto PATH; kubectl runs it as "kubectl kruise").
	go build -o bin/kubectl-kruise ./cmd/kubectl-kruise

.PHONY: lint
lint: ## go vet and gofmt.
	go vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

.PHONY: helm
helm: ## Build the pinned plain helm CLI into the cache (warm: no-op); prints its path.
	@TESTBIN_CACHE=$(TESTBIN_CACHE) ./scripts/helm/build.sh

.PHONY: lint-chart
lint-chart: ## helm lint charts/kruise with the defaults (and an imageRegistry, which the chart leaves to the user) and with each charts/kruise/ci values file.
	@helm=$$(TESTBIN_CACHE=$(TESTBIN_CACHE) ./scripts/helm/build.sh) && \
	  "$$helm" lint --strict charts/kruise --set imageRegistry=registry.example.com && \
	  for f in charts/kruise/ci/*-values.yaml; do "$$helm" lint --strict --quiet charts/kruise -f "$$f" || exit 1; done

.PHONY: testbin
testbin: ## Build kube-apiserver, etcd, kubectl, kwok and controller-gen into the cache (warm: no-op).
	TESTBIN_CACHE=$(TESTBIN_CACHE) ./scripts/testbin/build.sh

.PHONY: containerd
containerd: ## Install Debian's containerd and runc when missing (the daemon suites start a private one).
	@./scripts/containerd/install.sh

FUZZTIME ?= 30s

.PHONY: fuzz
fuzz: ## Run every Go fuzz target for FUZZTIME each (default 30s; CI runs them briefly); SAVE_CORPUS=1 keeps new inputs in testdata/fuzz.
	@FUZZTIME=$(FUZZTIME) ./scripts/fuzz/run.sh

.PHONY: test
test: containerd ## Unit and integration tests against a real kube-apiserver + etcd (and containerd for the daemon).
	@TESTBIN_CACHE=$(TESTBIN_CACHE) ./scripts/helm/build.sh >/dev/null
	@assets=$$(EXTRA_K8S=1 TESTBIN_CACHE=$(TESTBIN_CACHE) ./scripts/testbin/build.sh) && \
	  KUBEBUILDER_ASSETS=$$assets go test $(GO_TEST_FLAGS) ./...

.PHONY: bench
bench: ## Benchmarks under test/bench; they print figures and ratios, never fail on time.
	@assets=$$(EXTRA_K8S=1 TESTBIN_CACHE=$(TESTBIN_CACHE) ./scripts/testbin/build.sh) && \
	  KUBEBUILDER_ASSETS=$$assets go test -run '^$$' -bench . -benchtime $(BENCH_TIME) -timeout 30m ./test/bench/...

.PHONY: bench-large
bench-large: ## Platform-scale benchmarks (BENCH_SCALE=large): CloneSet at 1000 and 5000 pods, then the BenchmarkLarge* scenarios (platform mix, start-up, failover) at their large sizes; not in CI.
	@assets=$$(EXTRA_K8S=1 TESTBIN_CACHE=$(TESTBIN_CACHE) ./scripts/testbin/build.sh) && \
	  for n in 1000 5000; do \
	    echo "== BENCH_REPLICAS=$$n"; \
	    BENCH_REPLICAS=$$n KUBEBUILDER_ASSETS=$$assets go test -run '^$$' -bench 'BenchmarkCloneSet1000$$' -benchtime 1x -timeout 60m ./test/bench/ || exit 1; \
	  done && \
	  BENCH_SCALE=large KUBEBUILDER_ASSETS=$$assets go test -run '^$$' -bench 'BenchmarkLarge' -benchtime 1x -timeout 120m ./test/bench/

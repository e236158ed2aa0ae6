# weir — make help lists the targets.

SHELL := /usr/bin/env bash
.DEFAULT_GOAL := help

BIN               := $(CURDIR)/bin
CONTROLLER_GEN    := $(BIN)/controller-gen
CONTROLLER_TOOLS  := v0.23.0
GOLANGCI_LINT     := $(BIN)/golangci-lint
GOLANGCI_VERSION  := v2.15.0
CONTROLPLANE_BIN  := $(BIN)/controlplane
GO_TEST_FLAGS     ?= -count=1 -timeout=30m
export WEIR_CONTROLPLANE_BIN := $(CONTROLPLANE_BIN)

##@ Run

.PHONY: run
run: controlplane build ## Run weir's whole job locally: control plane, controllers, example fleet synced; Ctrl-C stops it.
	@$(BIN)/weir dev

##@ Test

# The packages that run concurrent reconcilers (--concurrent=4 by default) or
# the event server: make test runs them with the race detector, the rest without.
RACE_REGEX        := /internal/[a-z]+/controller/|/internal/notification/|/internal/runtime/|/internal/source$$
RACE_PACKAGES      = $$(go list ./... | grep -E '$(RACE_REGEX)')

.PHONY: test
test: controlplane ## Run every test: unit, and integration against a real kube-apiserver; controllers with -race.
	go test $(GO_TEST_FLAGS) $$(go list ./... | grep -v -E '$(RACE_REGEX)')
	go test $(GO_TEST_FLAGS) -race $(RACE_PACKAGES)

.PHONY: test-race
test-race: controlplane ## Run the controller and runtime packages' tests with the race detector.
	go test $(GO_TEST_FLAGS) -race $(RACE_PACKAGES)

# The packages make test-unit runs: every package with tests except those whose
# TestMain calls testenv.Main, which starts a control plane for the package
# (bench/ is left out: it holds benchmarks only). The few tests elsewhere that
# need one skip under -short. Linking the test binaries is most of the time:
# -ldflags=-w leaves DWARF out, a third less. Results are cached (no -count=1),
# so a second run reruns only the packages a change reaches.
UNIT_PACKAGES      = $$(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' ./... | \
	grep -v ' $(CURDIR)/bench' | while read -r pkg dir; do grep -qsE '\bMain\(m\b' "$$dir"/*_test.go || echo "$$pkg"; done)
UNIT_TEST_FLAGS   ?= -timeout=10m -ldflags=-w

.PHONY: test-unit
test-unit: ## Run the tests that need no control plane, with -short; cached, so a rerun takes seconds.
	go test $(UNIT_TEST_FLAGS) -short $(UNIT_PACKAGES)

.PHONY: bench
bench: controlplane ## Run the benchmarks.
	go test -run '^$$' -bench . -benchmem ./...

##@ Development

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code and CRD manifests from api/.
	$(CONTROLLER_GEN) object paths=./api/...
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=config/crd/bases

.PHONY: verify
verify: generate ## Regenerate, then fail if anything generated differs from what is committed.
	@git diff --exit-code -- api config || { echo "generated files are stale: run make generate"; exit 1; }

.PHONY: fmt
fmt: ## Format the code.
	gofmt -s -w api cmd internal config

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint with .golangci.yml.
	$(GOLANGCI_LINT) run ./...

##@ Build

.PHONY: build
build: ## Build the weir CLI and weir-controller into bin/.
	@echo "► building bin/weir (the first time Go compiles every dependency: a few minutes on 2 cores; seconds after)"
	@go build -tags $(GOTAGS) -o $(BIN)/weir ./cmd/weir
	@echo "► building bin/weir-controller"
	@go build -tags $(GOTAGS) -o $(BIN)/weir-controller ./cmd/weir-controller

# kustomize's Go plugin loader imports package plugin, which makes a cgo build export every symbol of the
# binary (272 MB instead of 192 MB, 11 MiB more of it resident); weir loads no Go plugins (design 0038).
GOTAGS ?= kustomize_disable_go_plugin_support

IMAGE_VERSION ?= v0.0.0-dev
IMAGE         ?= ghcr.io/weir-gitops/weir-controller:$(IMAGE_VERSION)

.PHONY: image
image: ## Build weir-controller's image without Docker into bin/weir-controller-image.tar; PUSH=host/repo:tag also pushes it.
	@echo "► building a static bin/linux-amd64/weir-controller"
	@CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -tags $(GOTAGS) -trimpath -ldflags "-s -w -X github.com/weir-gitops/weir/internal/version.Version=$(IMAGE_VERSION)" \
		-o $(BIN)/linux-amd64/weir-controller ./cmd/weir-controller
	@go run ./cmd/weir-image --binary $(BIN)/linux-amd64/weir-controller --version $(IMAGE_VERSION) --tag $(IMAGE) \
		--output $(BIN)/weir-controller-image.tar $(if $(PUSH),--push $(PUSH))

.PHONY: controlplane
controlplane: ## Build etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok into bin/controlplane (cached).
	@OUT=$(CONTROLPLANE_BIN) tools/controlplane/build.sh

$(CONTROLLER_GEN):
	GOBIN=$(BIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS)

$(GOLANGCI_LINT):
	GOBIN=$(BIN) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION)

##@ Help

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"} \
		/^##@/ { printf "\n%s\n", substr($$0, 5) } \
		/^[a-zA-Z_-]+:.*##/ { printf "  %-14s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

# garm's build. Every target works on a fresh machine with only Go: `make tools`
# installs the pinned code generators into .tmp/bin once, and targets that need
# them depend on it.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

# The Go every target builds and tests with: the go command fetches this
# toolchain through the module proxy the first time (decision 0033).
export GOTOOLCHAIN := go1.27.3

BIN := $(CURDIR)/.tmp/bin
# buf, protoc-gen-go and protoc-gen-garm are Go tools of the module in tools/,
# pinned by its go.mod and go.sum: the generators a `garm new` scaffold pins,
# built from the same module graph (decision 0075).
VERSITYGW_VERSION := v1.8.0
GOVULNCHECK_VERSION := v1.9.0
# The vulnerability database govulncheck reads, built offline from the Go
# vulnerability database's own module at this pinned revision.
VULNDB_VERSION := v0.0.0-20261105234957-e22db6528018
VULNDB := $(CURDIR)/.tmp/vulndb/$(VULNDB_VERSION)
BUF := $(BIN)/buf
VERSITYGW := $(BIN)/versitygw
GOVULNCHECK := $(BIN)/govulncheck

# Each buf module and where its generated code goes.
GEN_MODULES := annotations:gen examples/calculator/proto:examples/calculator/gen examples/bank/proto:examples/bank/gen conformance/proto:conformance/gen

.PHONY: help
help: ## List the targets.
	@grep -hE '^[a-z][a-z-]*:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

.PHONY: tools
tools: ## Install the generators pinned in tools/go.mod (buf, protoc-gen-go, protoc-gen-garm), versitygw (the tests' S3 server) and govulncheck with its database into .tmp.
	@mkdir -p $(BIN)
	@if [ ! -x $(BUF) ]; then \
		echo "building buf, protoc-gen-go and protoc-gen-garm (tools/go.mod) into $(BIN): the first time, minutes (README, Set up and test)"; \
	fi
	GOBIN=$(BIN) go -C tools install tool
	@# Every go.mod of both module graphs, which installing reads only in part: a scaffold's go
	@# command completes its go.mod from them, offline in the author's-path test (decision 0075).
	go -C tools mod graph >/dev/null
	go mod graph >/dev/null
	@if [ "$$(go version -m $(VERSITYGW) 2>/dev/null | awk '$$1 == "mod" { print $$3 }')" != "$(VERSITYGW_VERSION)" ]; then \
		echo "installing versitygw $(VERSITYGW_VERSION) into $(BIN) (about 1.5 minutes, once per machine)"; \
		GOBIN=$(BIN) go install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION); \
	fi
	@if [ "$$(go version -m $(GOVULNCHECK) 2>/dev/null | awk '$$1 == "mod" { print $$3 }')" != "$(GOVULNCHECK_VERSION)" ]; then \
		echo "installing govulncheck $(GOVULNCHECK_VERSION) into $(BIN)"; \
		GOBIN=$(BIN) go install golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION); \
	fi
	@if [ ! -f $(VULNDB)/index/db.json ]; then \
		echo "building the vulnerability database $(VULNDB_VERSION) into $(VULNDB)"; \
		src=$$(go mod download -json golang.org/x/vulndb@$(VULNDB_VERSION) | awk -F'"' '$$2 == "Dir" { print $$4 }'); \
		rm -rf $(VULNDB).partial; \
		go run golang.org/x/vulndb/cmd/indexdb@$(VULNDB_VERSION) -vulns "$$src/data/osv" -out $(VULNDB).partial; \
		mv $(VULNDB).partial $(VULNDB); \
	fi

.PHONY: protoc-gen-garm
protoc-gen-garm: tools ## Build protoc-gen-garm from this tree into .tmp/bin (a tool of tools/go.mod, which replaces garm with this tree).

.PHONY: generate
generate: tools ## Regenerate every generated file from the .proto sources.
	$(BUF) lint annotations
	@for m in $(GEN_MODULES); do \
		src=$${m%%:*}; out=$${m##*:}; \
		find "$$out" -type f \( -name '*.pb.go' -o -name '*.garm.json' \) -delete 2>/dev/null || true; \
		echo "buf generate $$src -> $$out"; \
		$(BUF) generate "$$src" --template buf.gen.yaml -o "$$out"; \
	done

.PHONY: checkgenerate
checkgenerate: generate ## Regenerate, then fail if anything differs from what is committed.
	@if [ -n "$$(git status --porcelain -- gen examples annotations conformance)" ]; then \
		echo "generated files are out of date; run 'make generate' and commit:"; \
		git status --porcelain -- gen examples annotations conformance; \
		git --no-pager diff --stat -- gen examples annotations conformance; \
		exit 1; \
	fi

.PHONY: garm
garm: ## Build the garm command from this tree into .tmp/bin.
	@mkdir -p $(BIN)
	go build -ldflags '-X main.sourceDir=$(CURDIR)' -o $(BIN)/garm ./cmd/garm

.PHONY: garm-catalogue
garm-catalogue: ## Build the garm-catalogue command from this tree into .tmp/bin.
	@mkdir -p $(BIN)
	go build -o $(BIN)/garm-catalogue ./catalogue-builder/cmd/garm-catalogue

.PHONY: garmd
garmd: ## Build the garmd daemon from this tree into .tmp/bin.
	@mkdir -p $(BIN)
	go build -o $(BIN)/garmd ./daemon/cmd/garmd

.PHONY: garm-approvals
garm-approvals: ## Build the approvals service (garm-approvals) from this tree into .tmp/bin.
	@mkdir -p $(BIN)
	go build -o $(BIN)/garm-approvals ./approvals/cmd/garm-approvals

# What `make install` and `make image` stamp into the commands' `version`:
# the nearest tag, commits since, the commit, and -dirty for uncommitted changes.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# The link-time variables each command prints for `version` (garmd version,
# garm catalogue version, garm-catalogue version, garm-approvals version, garm-sealer version), and the checkout garm was
# built from, which `garm new` points a scaffold's go.mod at (decision 0115).
LDFLAGS := -X github.com/garm-dev/garm/daemon.version=$(VERSION) -X github.com/garm-dev/garm/catalogue-builder/cli.version=$(VERSION) -X github.com/garm-dev/garm/approvals.version=$(VERSION) -X github.com/garm-dev/garm/ledger/sealer.version=$(VERSION) -X main.sourceDir=$(CURDIR)
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin

.PHONY: install
install: ## Build garm, garmd, garm-catalogue, garm-approvals and garm-sealer, static and stamped with VERSION (git describe), into BINDIR (PREFIX/bin; PREFIX=/usr/local by default).
	@mkdir -p $(BINDIR)
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o $(BINDIR)/ ./cmd/garm ./daemon/cmd/garmd ./catalogue-builder/cmd/garm-catalogue ./approvals/cmd/garm-approvals ./ledger/cmd/garm-sealer
	@echo "installed garm, garmd, garm-catalogue, garm-approvals and garm-sealer $(VERSION) into $(BINDIR)"

.PHONY: image
image: ## Build garmd's and garm-approvals' OCI images (static, non-root, no shell), reproducible from the commit, as OCI layout tarballs in .tmp/image/.
	go run ./deploy/image -o $(CURDIR)/.tmp/image -version $(VERSION)

.PHONY: calcd
calcd: ## Build the example calculator's service command from this tree into .tmp/bin.
	@mkdir -p $(BIN)
	go build -o $(BIN)/calcd ./examples/calculator/cmd/calcd

.PHONY: nats-server
nats-server: ## Build nats-server, at the version go.mod pins, into .tmp/bin (for the "Securing the bus" recipe).
	@mkdir -p $(BIN)
	go build -o $(BIN)/nats-server github.com/nats-io/nats-server/v2

.PHONY: catalogue
catalogue: garm-catalogue ## Build the calculator's catalogue artifact into .tmp/catalogue/.
	@mkdir -p $(CURDIR)/.tmp/catalogue
	$(BIN)/garm-catalogue build -f examples/calculator/catalogue.yaml -o .tmp/catalogue/calculator.binpb

.PHONY: dev
dev: ## Run the whole plane locally (NATS, the dev IdP, the approvals inbox, the bank and calculator tools, garmd) and print a quick-start.
	@echo "building the dev stack into $(BIN)/devstack: the first build compiles garmd, the embedded NATS server and their dependencies, about 650 packages (README gives measured times); later builds take seconds" >&2
	@mkdir -p $(BIN)
	@go build -v -o $(BIN)/devstack ./examples/devstack 2>&1 | awk '/^[A-Za-z0-9._~\/-]+$$/ { if (++n % 50 == 0) printf "still building the dev stack: %d packages compiled\n", n > "/dev/stderr"; next } { print > "/dev/stderr" }'
	$(BIN)/devstack $(ARGS)

.PHONY: cluster
cluster: nats-server garmd ## Run the same plane as a cluster on loopback (three nats-server processes, R3 state, two garmd processes behind a round-robin front) and print a quick-start with kill -9 and restart commands.
	go run ./examples/devstack --cluster --nats-server $(BIN)/nats-server --garmd $(BIN)/garmd $(ARGS)

.PHONY: build
build: ## Build every package and command.
	go build ./...

# What make test needs beyond Go, one package per test that needs it:
# the official TypeScript MCP clients, pinned by tests/mcp-ts/package-lock.json
# (examples/devstack's TestTypeScriptMCPClients; needs Node.js with npm);
# Debian's chromium (the approvals inbox's browser test), prometheus (promtool,
# deploy/prometheus's rules check), systemd (systemd-analyze,
# deploy/systemd's units check), and openssl and curl (deploy's run of the
# operators' recipe). Each of those tests fails without its package.
TEST_DEBS := chromium prometheus systemd openssl curl

.PHONY: test-deps
test-deps: ## Install what make test needs beyond Go: npm ci of the TypeScript MCP clients and of the TypeScript conformance service (needs Node.js and npm), and Debian's chromium, prometheus, systemd, openssl and curl with apt-get (sudo when not root).
	@command -v npm >/dev/null || { echo "make test-deps: npm not found: install Node.js with npm first (Debian: apt-get install nodejs npm)" >&2; exit 1; }
	npm ci --prefix tests/mcp-ts --no-audit --no-fund
	@# conformance/toolservice's TestTheTypeScriptServicePassesTheWholeKit builds and runs it.
	npm ci --prefix examples/conformance-ts --no-audit --no-fund
	@if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/promtool ] || [ ! -x /usr/bin/systemd-analyze ] || [ ! -x /usr/bin/openssl ] || [ ! -x /usr/bin/curl ]; then \
		sudo=""; if [ "$$(id -u)" != 0 ]; then sudo=sudo; fi; \
		echo "$$sudo apt-get install -y $(TEST_DEBS)"; \
		$$sudo apt-get update && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y $(TEST_DEBS); \
	fi

.PHONY: test
test: tools ## Run every test with the race detector, then the codec's and the instance rules' allocation tests without it, then the minter conformance suites.
	go test -race ./...
	@# Under the race detector sync.Pool drops pooled values on purpose, so the
	@# codec's pooled encoders can be pinned to zero allocations only without it.
	go test ./daemon/internal/codec/
	@# The same for the instance rules' pinned allocation counts (decision 0097).
	go test -run Alloc ./daemon/internal/chain/instance/ ./daemon/internal/chain/
	@# The minter kit's shipped suites, against the dev IdP, the approvals service and a fixture
	@# STS it starts on loopback (docs/conformance.md, "Minters").
	go test -race -tags conformance -skip '^TestAnExternalMinter$$' ./daemon/conformance/minter/

.PHONY: lint
lint: tools ## Vet and gofmt-check the Go code; buf lint and format-check every proto module.
	go vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@for m in $(GEN_MODULES); do \
		src=$${m%%:*}; \
		echo "buf lint $$src"; $(BUF) lint "$$src"; \
		$(BUF) format -d --exit-code "$$src"; \
	done

.PHONY: vulncheck
vulncheck: tools ## Fail on any known vulnerability that affects the code (govulncheck, offline database).
	$(GOVULNCHECK) -db file://$(VULNDB) ./...

.PHONY: bench
bench: ## Run the benchmarks.
	go test -run '^$$' -bench . -benchmem ./...

.PHONY: bench-e2e
bench-e2e: nats-server garmd calcd catalogue ## Measure garmd against a bare HTTP→NATS bridge and direct NATS, each in its own processes on loopback, in paired rounds; prints the table (bounded: ARGS=--budget 5m by default).
	go build -o $(BIN)/benche2e ./tests/benche2e
	$(BIN)/benche2e run --nats-server $(BIN)/nats-server --garmd $(BIN)/garmd --calcd $(BIN)/calcd --catalogue .tmp/catalogue/calculator.binpb $(ARGS)

.PHONY: ci
ci: checkgenerate lint vulncheck test ## What CI runs: checkgenerate, lint, vulncheck, test.

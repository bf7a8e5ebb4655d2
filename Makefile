# cachefit: two commands on a fresh machine — `make demo` and `make test`.
# Each installs what it needs: Debian packages with apt-get when root, Python packages in .venv.

PYTHON   ?= $(shell command -v python3.11 || command -v python3)
VENV     := .venv
BIN      := $(VENV)/bin
DEB_PKGS := clang-19 llvm-19 llvm-19-dev libclang-rt-19-dev libclang1-19 valgrind make g++
# Only the tests need these: build-system tests (cmake, ninja), the HTML report's
# screenshot test (chromium), the QEMU plugin tests (qemu-user, qemu-system-x86), the
# 32-bit DWARF and QEMU tests (gcc-multilib, g++-multilib).
TEST_PKGS := cmake ninja-build chromium qemu-user qemu-system-x86 gcc-multilib g++-multilib
CXXFLAGS_DEMO := -std=c++17
# The suite runs in one pytest-xdist worker per CPU; --dist loadgroup keeps the modules
# listed in tests/conftest.py (WHOLE_MODULES: expensive module fixtures) on one worker each.
# `make test PYTEST_PARALLEL=` runs it in one process.
PYTEST_PARALLEL ?= -n auto --dist loadgroup

.PHONY: all deps system-deps test-deps venv demo test lint clean

all: test

system-deps:
	@scripts/install-system-deps.sh $(DEB_PKGS)

test-deps:
	@scripts/install-system-deps.sh $(TEST_PKGS)

# pip builds the block search library (src/cachefit/layout/native) into the source tree
$(BIN)/.installed: pyproject.toml src/cachefit/layout/native/cf_block_search.c
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "cachefit: installing Python packages into $(VENV)"
	@$(BIN)/pip install -q --upgrade pip >/dev/null
	@$(BIN)/pip install -q -e '.[dev]'
	@touch $@

venv: $(BIN)/.installed

deps: system-deps venv

demo: deps
	@scripts/demo.sh

# lint-imports checks the import contracts in pyproject.toml (docs/architecture.md).
lint: venv
	$(BIN)/ruff check src tests bench examples
	$(BIN)/lint-imports --no-cache

test: deps test-deps
	$(BIN)/ruff check src tests bench examples
	$(BIN)/lint-imports --no-cache
	$(BIN)/pytest -q $(PYTEST_PARALLEL)

clean:
	rm -rf out .pytest_cache

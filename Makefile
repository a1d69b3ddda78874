# SPDX-License-Identifier: GPL-2.0
#
# uwprof top-level build. The module itself is described by ./Kbuild; this
# file drives it, the tool, the tests and the demo.
#
#   make                  module (when KDIR exists) and tool
#   make module KDIR=...  [ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-]
#                         [UWPROF_TEST_NMI=1: x86_64, the test-only NMI
#                         handler that samples; tests/vm/run --nmi]
#                         [UWPROF_TEST_MM=1: the test-only page-table check
#                         of user reads; tests/security, uwprof_security mm]
#   make tool
#   make demo             profile the bundled demo, write a flamegraph
#   make check            every test: host tests and the four guest targets
#   make matrix           module builds and in-guest suite on every supported
#                         kernel (5.10, 6.1, 6.12, 6.12-rt, unstable)
#   make accuracy         stack-accuracy suite in the four guests, vs perf,
#                         and the real-program suite (make realprog)
#   make realprog         programs nobody here wrote (Debian's, Rust, Go,
#                         node, LLD-linked C++), x86_64 and arm64, vs perf
#   make bench            overhead figures, written to docs/results.md
#   make bench-python     what CPython's frames cost the profiled program, and
#                         the recorder per new code object (x86_64 icount
#                         guest; build/bench/python-cost.txt)
#   make dkms-install     install the module through DKMS
#   make stress           in-guest stress and fuzz (x86_64 6.1, arm64 6.1
#                         shortened, the debug kernel; x86_64 6.1 again
#                         with NMIs injected)
#   make kernel-debug     build the debug kernels (KASAN, lockdep, ...; arm64
#                         with pseudo-NMI; x86_64 PREEMPT_RT from 6.12)
#   make check-debug      in-guest suite, NMI runs and stress on the debug
#                         kernels (x86_64, x86_64 PREEMPT_RT, then arm64)
#   make install          install the uwprof command, man page, completion
#   make deb              Debian packages uwprof and uwprof-dkms (build/deb),
#                         then lintian on them
#   make check-deb        install, use and purge both packages in an x86_64
#                         guest on Debian 12's kernel (tests/deb/run)

KDIR ?= /lib/modules/$(shell uname -r)/build
ARCH ?=
CROSS_COMPILE ?=
# Debian's headers expect these when cross-building from an amd64 host.
ifeq ($(ARCH),arm64)
ifneq ($(shell uname -m),aarch64)
DEB_CROSS := DEB_BUILD_ARCH=amd64 DEB_HOST_ARCH=arm64 DEB_HOST_GNU_TYPE=aarch64-linux-gnu
CROSS_COMPILE := $(or $(CROSS_COMPILE),aarch64-linux-gnu-)
endif
endif
KMAKE = $(MAKE) -C $(KDIR) M=$(CURDIR) $(if $(ARCH),ARCH=$(ARCH)) \
	$(if $(CROSS_COMPILE),CROSS_COMPILE=$(CROSS_COMPILE)) $(DEB_CROSS)

VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)

.PHONY: all module module-clean tool deps demo check check-host check-guest realprog soak install \
	dkms-install dkms-uninstall fuzz bench-table clean accuracy bench bench-python \
	stress kernel-debug check-debug matrix deb check-deb

all: tool
ifneq ($(wildcard $(KDIR)/Makefile),)
all: module
endif

module:
	$(KMAKE) modules

module-clean:
	$(KMAKE) clean

tool:
	$(MAKE) -C tool

deps:
	@scripts/deps

demo: deps
	scripts/demo

check: deps
	tests/check

check-host: deps
	tests/check --host

check-guest: deps
	tests/check --guest

# Slow (each guest takes 5 to 15 minutes under TCG), so not part of check.
matrix: deps
	tests/matrix

fuzz:
	$(MAKE) -C tool fuzz

# Stack accuracy against expected chains in all four guests (uwprof vs perf),
# then on programs nobody here wrote.
accuracy: deps
	tests/accuracy/run
	tests/realprog/run

# Programs nobody here wrote (Debian's, Rust, Go, LLD-linked C++, node):
# share of samples rooted, uwprof at its defaults vs perf --call-graph dwarf.
realprog: deps
	tests/realprog/run

# Overhead and cost figures (x86_64 guest and host); writes docs/results.md.
bench: deps
	tests/bench/run

bench-python: deps
	tests/bench/python-cost

# Reliability: docs/reliability.md has the figures and what each runs.
stress: deps
	tests/stress/run
	tests/stress/run --nmi x86_64-6.1

# The agent through 30 minutes of process and library churn (x86_64 guest):
# its RSS and the module's table memory; figures in docs/reliability.md.
SOAK_MINUTES ?= 30
soak: deps
	tests/tool/guest-build x86_64 $(CURDIR)/build
	tests/vm/run --arch x86_64 --kernel 6.1 --timeout $$(( $(SOAK_MINUTES) * 60 + 1800 )) -- \
		/bin/sh $(CURDIR)/tests/tool/guest-soak --minutes $(SOAK_MINUTES) \
		--min-procs 10000 x86_64 $(CURDIR)/build

kernel-debug: deps
	tests/debug-kernel/build --arch x86_64
	tests/debug-kernel/build --arch x86_64 --rt
	tests/debug-kernel/build --arch arm64

check-debug: deps
	tests/debug-kernel/check --arch x86_64
	tests/debug-kernel/check --arch x86_64 --rt
	tests/debug-kernel/check --arch arm64

bench-table:
	$(MAKE) -C tool bench-table

PREFIX ?= /usr/local
install: tool
	install -D -m 755 tool/uwprof $(DESTDIR)$(PREFIX)/bin/uwprof
	install -D -m 644 docs/uwprof.1 $(DESTDIR)$(PREFIX)/share/man/man1/uwprof.1
	install -D -m 644 completion/uwprof.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/uwprof
	install -D -m 644 python/uwprof_reader.py \
		$(DESTDIR)$(PREFIX)/share/uwprof/python/uwprof_reader.py

# Built from a copy of the tree in build/deb/uwprof-VERSION, so that the
# packages land in build/deb and the tree stays clean; the copy's
# debian/changelog must name VERSION (debian/rules checks it).
DEB_DIR := build/deb
DEB_ARCH = $(shell dpkg --print-architecture)
deb: deps
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_DIR)/uwprof-$(VERSION)
	tar -C $(CURDIR) --exclude=./build --exclude=./.git --exclude='*.o' \
		--exclude='*.a' --exclude=./tool/uwprof -cf - . | \
		tar -C $(DEB_DIR)/uwprof-$(VERSION) -xf -
	cd $(DEB_DIR)/uwprof-$(VERSION) && \
		DEB_BUILD_OPTIONS="parallel=2 $(DEB_BUILD_OPTIONS)" dpkg-buildpackage -us -uc -b
	lintian -i --fail-on error,warning \
		$(DEB_DIR)/uwprof_$(VERSION)_$(DEB_ARCH).changes
	@ls -l $(DEB_DIR)/*.deb

# Slow (a DKMS build in a TCG guest), so not part of check.
check-deb: deb
	tests/deb/run

dkms-install:
	rm -rf /usr/src/uwprof-$(VERSION)
	mkdir -p /usr/src/uwprof-$(VERSION)
	cp -r Kbuild Makefile dkms.conf module include /usr/src/uwprof-$(VERSION)/
	dkms install uwprof/$(VERSION)

dkms-uninstall:
	dkms remove uwprof/$(VERSION) --all
	rm -rf /usr/src/uwprof-$(VERSION)

clean: module-clean
	$(MAKE) -C tool clean
	rm -rf build

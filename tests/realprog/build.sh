#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A build-like run of Debian's own programs, each process living a
# fraction of a second: the C compiler driver with its cc1 and as, a
# compressor pair, an interpreter, shells; a few dozen processes in all.
# Programs the guest's root lacks are left out.
#
# usage: build.sh SOURCE.c SCRATCH_DIR ROUNDS
src=$1
dir=$2
rounds=${3:-3}
mkdir -p "$dir"
have() { command -v "$1" >/dev/null 2>&1; }
i=0
while [ "$i" -lt "$rounds" ]; do
	i=$((i + 1))
	if have gcc; then
		gcc -O2 -w -c -o "$dir/build-$i.o" "$src" || exit 1
	fi
	if have xz; then
		xz -3 -T1 -c "$src" >"$dir/build-$i.xz" || exit 1
		xz -d -c "$dir/build-$i.xz" >/dev/null || exit 1
	fi
	if have gzip; then
		gzip -6 -c "$src" | gzip -d -c >/dev/null || exit 1
	fi
	if have python3; then
		python3 -c 'print(sum(i * i for i in range(100000)))' >/dev/null || exit 1
	fi
	sh -c 'n=0; while [ $n -lt 2000 ]; do n=$((n + 1)); done' || exit 1
done
exit 0

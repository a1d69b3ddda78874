// SPDX-License-Identifier: GPL-2.0
// A JavaScript workload for the real-program suite, run by node: JIT-compiled
// recursion and string building for SECONDS seconds.
'use strict';
const secs = Number(process.argv[2] || 1);
const end = Date.now() + secs * 1000;
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
let sum = 0;
while (Date.now() < end) {
    sum += fib(20);
    sum += JSON.stringify({ a: [sum % 97, 'x'.repeat(sum % 13)] }).length;
}
process.exitCode = sum === 42 ? 1 : 0;

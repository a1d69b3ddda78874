// SPDX-License-Identifier: GPL-2.0
// A Rust workload for the real-program suite: recursion, iterators and
// collections from std, for SECONDS seconds.
use std::collections::HashMap;
use std::time::{Duration, Instant};

fn fib(n: u64) -> u64 {
    if n < 2 { n } else { fib(n - 1) + fib(n - 2) }
}

fn words(seed: u64) -> usize {
    let mut m: HashMap<u64, u64> = HashMap::new();
    let mut s = seed;
    for _ in 0..20000 {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1);
        *m.entry(s >> 52).or_insert(0) += 1;
    }
    let mut v: Vec<_> = m.into_iter().collect();
    v.sort();
    v.len()
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1.0);
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut sum = 0u64;
    let mut seed = 1u64;
    while Instant::now() < end {
        sum = sum.wrapping_add(fib(22)).wrapping_add(words(seed) as u64);
        seed += 1;
    }
    std::process::exit((sum == 42) as i32);
}

// SPDX-License-Identifier: GPL-2.0

// A Go workload for the real-program suite: goroutines that hash, sort
// and allocate (so the scheduler, the garbage collector and its system
// stack switches are on the stacks), for SECONDS seconds.
package main

import (
	"crypto/sha256"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"
)

func work(seed int) int {
	v := make([]string, 0, 5000)
	for i := 0; i < 5000; i++ {
		h := sha256.Sum256([]byte(strconv.Itoa(seed*7919 + i)))
		v = append(v, string(h[:8]))
	}
	sort.Strings(v)
	return len(v[0])
}

func main() {
	secs := 1.0
	if len(os.Args) > 1 {
		if s, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			secs = s
		}
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	var wg sync.WaitGroup
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := g; time.Now().Before(end); i += 3 {
				work(i)
			}
		}(g)
	}
	wg.Wait()
}

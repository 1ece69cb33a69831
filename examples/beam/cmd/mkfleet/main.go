// Command mkfleet writes a synthetic fleet of be.out files for measuring
// throughput: each file is SIZE bytes of the ordinary lines a real be.out
// is made of (glog INFO/WARNING lines, JVM and Hadoop DEBUG lines, Java
// logger lines, SLF4J lines, start-time lines) with one crash text of
// testdata/corpus inserted at a random place. Output is deterministic
// for given flags.
//
//	go run ./cmd/mkfleet --out /tmp/fleet --files 64 --size 4MB
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

var lineKinds = []string{
	"I20250303 10:15:%02d.%06d 12345 fragment_mgr.cpp:123] exec plan fragment, query_id=1a2b3c4d-5e6f, fragment_instance_id=7a8b-9c0d\n",
	"W20250303 10:15:%02d.%06d 12345 tablet_manager.cpp:891] tablet not found. tablet_id=100%d\n",
	"DEBUG   2025-03-03 10:15:%02d,%03d 196     org.apache.hadoop.security.Groups       [main]   Creating new Groups object\n",
	"2025-03-03 10:15:%02d,%03d INFO  [pool-3-thread-1] org.apache.doris.common.jni.JniScanner - scanner opened, batch size 4064\n",
	"SLF4J: Found binding in [jar:file:/opt/doris/be/lib/java_extensions/preload-extensions-jar-with-dependencies.jar!/org/slf4j/impl/StaticLoggerBinder.class] %02d %03d\n",
	"start time: Tue Nov 12 14:20:%02d CST 2024 %03d\n",
}

func main() {
	out := flag.String("out", "", "output directory")
	files := flag.Int("files", 64, "number of files")
	size := flag.String("size", "4MB", "bytes of ordinary lines per file (KB, MB suffixes)")
	corpus := flag.String("corpus", "../../testdata/corpus", "directory of crash texts to insert")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "usage: mkfleet --out DIR [--files N] [--size 4MB] [--corpus DIR]")
		os.Exit(2)
	}
	n := parseSize(*size)
	var crashes []string
	filepath.WalkDir(*corpus, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".txt") {
			crashes = append(crashes, p)
		}
		return nil
	})
	slices.Sort(crashes)
	if len(crashes) == 0 {
		fmt.Fprintln(os.Stderr, "mkfleet: no .txt crash texts under", *corpus)
		os.Exit(1)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "mkfleet:", err)
		os.Exit(1)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range *files {
		crash, err := os.ReadFile(crashes[i%len(crashes)])
		if err != nil {
			fmt.Fprintln(os.Stderr, "mkfleet:", err)
			os.Exit(1)
		}
		var b bytes.Buffer
		at := rng.IntN(n)
		inserted := false
		for b.Len() < n {
			if !inserted && b.Len() >= at {
				b.Write(crash)
				if len(crash) > 0 && crash[len(crash)-1] != '\n' {
					b.WriteByte('\n')
				}
				inserted = true
			}
			fmt.Fprintf(&b, lineKinds[rng.IntN(len(lineKinds))], rng.IntN(60), rng.IntN(1000))
		}
		name := filepath.Join(*out, fmt.Sprintf("node%03d", i), "be.out")
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "mkfleet:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "mkfleet:", err)
			os.Exit(1)
		}
	}
}

func parseSize(s string) int {
	mul := 1
	switch {
	case strings.HasSuffix(s, "MB"):
		mul, s = 1<<20, strings.TrimSuffix(s, "MB")
	case strings.HasSuffix(s, "KB"):
		mul, s = 1<<10, strings.TrimSuffix(s, "KB")
	}
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil || n <= 0 {
		fmt.Fprintln(os.Stderr, "mkfleet: bad --size", s)
		os.Exit(2)
	}
	return n * mul
}

// Command batch shows offline batch classification with the crashsig
// library: it walks directories of crash logs, parses, signs and classifies
// them on all cores, and prints one TSV row per incident (sorted, so the
// output is deterministic) followed by counts per path and per defect.
//
//	go run ./examples/batch testdata/corpus
package main

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/crashsig/crashsig/catalog"
	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

type row struct {
	source     string
	line       int
	path, area string
	defect     string
	status     string
	key        string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: batch DIR|FILE...")
		os.Exit(2)
	}
	var files []string
	for _, root := range os.Args[1:] {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && filepath.Ext(p) == ".txt" {
				files = append(files, p)
			}
			return nil
		})
	}
	// One Generator and one Catalog serve every worker: both are safe for
	// concurrent use and cache what they compute.
	gen := signature.Default()
	cat, err := catalog.Default()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	jobs := make(chan string)
	var mu sync.Mutex
	var rows []row
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for path := range jobs {
				f, err := os.Open(path)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					continue
				}
				crashes, err := symbolize.ParseAll(ctx, f, symbolize.ScanOptions{Source: path})
				f.Close()
				if err != nil {
					fmt.Fprintln(os.Stderr, path, err)
				}
				for _, c := range crashes {
					sig := gen.Generate(c)
					v := cat.Classify(c, sig)
					r := row{source: c.Source, line: c.StartLine, path: string(v.Path), area: v.Area, status: string(v.Status), key: sig.Key}
					if v.Defect != nil {
						r.defect = v.Defect.ID
					}
					mu.Lock()
					rows = append(rows, r)
					mu.Unlock()
				}
			}
		})
	}
	for _, f := range files {
		jobs <- f
	}
	close(jobs)
	wg.Wait()

	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.source, b.source), cmp.Compare(a.line, b.line))
	})
	fmt.Printf("source\tline\tpath\tarea\tdefect\tstatus\tkey\n")
	paths, defects := map[string]int{}, map[string]int{}
	for _, r := range rows {
		fmt.Printf("%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.source, r.line, r.path, r.area, r.defect, r.status, r.key)
		paths[r.path]++
		if r.defect != "" {
			defects[r.defect]++
		}
	}
	fmt.Printf("\n%d incidents in %d files (catalog %s, %s)\n", len(rows), len(files), cat.Revision(), signature.Algorithm)
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range paths {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Printf("path %-10s %d\n", k, paths[k])
	}
	fmt.Printf("%d incidents matched %d known defects\n", sum(defects), len(defects))
}

func sum(m map[string]int) (n int) {
	for _, v := range m {
		n += v
	}
	return n
}

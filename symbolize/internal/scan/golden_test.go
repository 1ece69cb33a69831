package scan

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goldenInputs lists the crash texts whose parse is pinned by golden files.
func goldenInputs(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, dir := range []string{"corpus/doris", "corpus/starrocks", "formats"} {
		ms, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", dir, "*.txt"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, ms...)
	}
	if len(files) < 150 {
		t.Fatalf("only %d golden inputs found", len(files))
	}
	return files
}

// update (-update) rewrites golden files: `go test ./... -update`.
var update = flag.Bool("update", false, "rewrite golden files (the scanner's JSON of every corpus and format text)")

// TestGolden parses every real and synthetic crash text and compares the
// incidents, as JSON, with testdata/golden/symbolize/<dir>/<name>.json.
// Run `go test ./symbolize -update` to rewrite them, then review the diff.
func TestGolden(t *testing.T) {
	for _, in := range goldenInputs(t) {
		rel, _ := filepath.Rel(filepath.Join("..", "..", "..", "testdata"), in)
		rel = filepath.ToSlash(rel)
		golden := filepath.Join("..", "..", "..", "testdata", "golden", "symbolize", strings.TrimSuffix(rel, ".txt")+".json")
		t.Run(rel, func(t *testing.T) {
			cs := parseFile(t, in)
			for _, c := range cs {
				c.Source = rel
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(cs); err != nil {
				t.Fatal(err)
			}
			got := buf.Bytes()
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./symbolize -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("parse of %s differs from %s; run `go test ./symbolize -update` and review the diff", rel, golden)
			}
		})
	}
}

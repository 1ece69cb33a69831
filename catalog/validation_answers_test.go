package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
	"github.com/stretchr/testify/require"
)

// This file uses only API that the tree before issue 14 (a1ba7d5) has, so
// it can be copied into a worktree of that commit to produce the "before"
// answers (CATALOG.md, "Validation").

// answersLabel is the part of a validation label the answers need.
type answersLabel struct {
	File        string `json:"file"`
	DuplicateOf string `json:"duplicate_of"`
}

// parseReader parses one log from r (rel names it in errors).
func parseReader(t testing.TB, rel string, r io.Reader) parsedLog {
	t.Helper()
	cs, err := symbolize.ParseAll(context.Background(), r, symbolize.ScanOptions{Source: rel})
	require.NoError(t, err, rel)
	p := parsedLog{name: rel, crashes: cs}
	for _, c := range cs {
		p.sigs = append(p.sigs, signature.Generate(c))
	}
	return p
}

// TestValidationAnswers writes this tree's answers on the validation set
// (and the corpus files its pairs name) to the file named by
// CRASHSIG_ANSWERS: file, path, key, defect. It uses only API that the
// pre-issue-14 tree has, so the same file run in a worktree of a1ba7d5
// produces testdata/catalog/validation-before.tsv.
func TestValidationAnswers(t *testing.T) {
	out := os.Getenv("CRASHSIG_ANSWERS")
	if out == "" {
		t.Skip("set CRASHSIG_ANSWERS=file to write the answers")
	}
	root := os.Getenv("CRASHSIG_VALIDATION_ROOT") // testdata dir holding validation/ (default: this tree's)
	if root == "" {
		root = filepath.Join(repoRoot, "testdata")
	}
	c, err := Default()
	require.NoError(t, err)
	var rels []string
	for _, prod := range []string{"doris", "starrocks"} {
		b, err := os.ReadFile(filepath.Join(root, "validation", prod, "labels.jsonl"))
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		for _, line := range strings.Split(string(b), "\n") {
			var l answersLabel
			if strings.TrimSpace(line) == "" || json.Unmarshal([]byte(line), &l) != nil {
				continue
			}
			rels = append(rels, "validation/"+prod+"/"+l.File)
			if l.DuplicateOf != "" {
				rels = append(rels, l.DuplicateOf)
			}
		}
	}
	sort.Strings(rels)
	var b strings.Builder
	b.WriteString("file\tpath\tkey\tdefect\n")
	for i, rel := range rels {
		if i > 0 && rels[i-1] == rel {
			continue
		}
		f, err := os.Open(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Logf("%s: %v", rel, err)
			continue
		}
		p := parseReader(t, rel, f)
		f.Close()
		v, idx := fileVerdict(c, p)
		key, def := "", ""
		if idx >= 0 {
			key = p.sigs[idx].Key
		}
		if v.Defect != nil {
			def = v.Defect.ID
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", rel, v.Path, strings.ReplaceAll(key, "\t", " "), def)
	}
	require.NoError(t, os.WriteFile(out, []byte(b.String()), 0o644))
}

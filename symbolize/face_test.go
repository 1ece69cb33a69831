package symbolize

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/internal/facegen"
)

// faces are the generated files that make the scanner's and the
// demangler's exported names this package's API (doc.go, "Internal
// packages").
var faces = []struct {
	file string
	opts facegen.Options
}{
	{"scan_face.go", facegen.Options{
		Dir: "internal/scan", Name: "scan", Path: "github.com/crashsig/crashsig/symbolize/internal/scan", OutPkg: "symbolize",
		// Used by the symbolizer (bias.go, core_crash.go), not part of the API.
		Skip:    []string{"NameKey", "ProductFromFrames"},
		AddNote: "%s is declared in internal/scan, with its fields and methods: go doc github.com/crashsig/crashsig/symbolize/internal/scan.%s",
	}},
	{"demangle_face.go", facegen.Options{
		Dir: "internal/demangler", Name: "demangler", Path: "github.com/crashsig/crashsig/symbolize/internal/demangler", OutPkg: "symbolize",
		Rename:  map[string]string{"New": "NewDemangler"},
		AddNote: "%s is declared in internal/demangler, with its methods: go doc github.com/crashsig/crashsig/symbolize/internal/demangler.%s",
	}},
}

// TestFaceGenerated: the face files are what internal/facegen makes of
// the internal packages today (-update rewrites them), so an exported name
// added to internal/scan reaches the API and a changed doc comment reaches
// go doc.
func TestFaceGenerated(t *testing.T) {
	for _, f := range faces {
		want, err := facegen.Generate(f.opts)
		require.NoError(t, err, f.file)
		if *update {
			require.NoError(t, os.WriteFile(f.file, want, 0o644))
			continue
		}
		got, err := os.ReadFile(f.file)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), "%s is stale: go test ./symbolize -run TestFaceGenerated -update", f.file)
	}
}

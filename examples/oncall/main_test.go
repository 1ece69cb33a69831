package main

import (
	"bytes"
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/crashsig/crashsig/pipeline"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOncallPaste: a paste on stdin with the version said on the command
// line gets the answer first (affected, upgrade) and the evidence after.
func TestOncallPaste(t *testing.T) {
	paste, err := os.ReadFile("../../testdata/corpus/starrocks/019-trash-sweep-tabletupdates-to-updates-pb.txt")
	require.NoError(t, err)
	var out bytes.Buffer
	code := run(context.Background(), pipeline.Options{AssumeVersion: "2.1.5", NoSystemDebugDirs: true}, nil, bytes.NewReader(paste), &out, &bytes.Buffer{})
	require.Equal(t, 0, code)
	first, _, _ := strings.Cut(out.String(), "\n")
	assert.Contains(t, first, "known defect SR-6046")
	assert.Contains(t, first, "upgrade to 2.1.7")
	assert.Contains(t, out.String(), "- version 2.1.5 given by the caller")

	out.Reset()
	code = run(context.Background(), pipeline.Options{NoSystemDebugDirs: true}, nil, strings.NewReader("nothing here\n"), &out, &bytes.Buffer{})
	assert.Equal(t, 3, code)
	assert.Contains(t, out.String(), "no crash found")
}

// TestSharesResultType: the answer is printed from a pipeline.Result.
func TestSharesResultType(t *testing.T) {
	assert.Equal(t, reflect.TypeOf(&pipeline.Result{}), reflect.TypeOf(answer).In(1))
}

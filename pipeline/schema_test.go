package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/crashsig/crashsig/catalog"
	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const schemaFile = "result.schema.json"

func compileSchema(t *testing.T) (result, bucket *jsonschema.Schema) {
	t.Helper()
	f, err := os.Open(schemaFile)
	require.NoError(t, err)
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const id = "https://github.com/crashsig/crashsig/pipeline/result.schema.json"
	require.NoError(t, c.AddResource(id, doc))
	result, err = c.Compile(id)
	require.NoError(t, err)
	bucket, err = c.Compile(id + "#/$defs/bucket")
	require.NoError(t, err)
	return result, bucket
}

func validate(t *testing.T, s *jsonschema.Schema, what string, line []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	require.NoError(t, err, what)
	if err := s.Validate(inst); err != nil {
		t.Errorf("%s does not validate against %s: %v", what, schemaFile, err)
	}
}

// TestGoldenOutputsValidate validates every JSON line of the CLI's golden
// outputs (testdata/golden/crashsig/*.jsonl; buckets-*.jsonl against
// $defs/bucket) against the schema.
func TestGoldenOutputsValidate(t *testing.T) {
	result, bucket := compileSchema(t)
	files, err := filepath.Glob("../testdata/golden/crashsig/*.jsonl")
	require.NoError(t, err)
	require.NotEmpty(t, files, "no JSON goldens: run go test ./examples/crashsig -update")
	lines := 0
	for _, f := range files {
		s := result
		if strings.HasPrefix(filepath.Base(f), "buckets") {
			s = bucket
		}
		fh, err := os.Open(f)
		require.NoError(t, err)
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 64<<20)
		n := 0
		for sc.Scan() {
			n++
			validate(t, s, fmt.Sprintf("%s:%d", f, n), sc.Bytes())
		}
		require.NoError(t, sc.Err())
		fh.Close()
		assert.Positive(t, n, f)
		lines += n
	}
	t.Logf("%d golden lines in %d files", lines, len(files))
}

// TestResultsValidate runs the pipeline over every crash text of the
// repository and a core, and validates each Result and each Bucket.
func TestResultsValidate(t *testing.T) {
	result, bucket := compileSchema(t)
	bin := gunzip(t, "../testdata/core/bin/sim_fp.gz", filepath.Join(t.TempDir(), "sim_fp"))
	p := newPipeline(t, Options{Binaries: []string{bin}})
	b := NewBucketer()
	n := 0
	for r, err := range p.Run(context.Background(), nil, "../testdata/corpus", "../testdata/formats", "../testdata/defects", "../testdata/core/cores/kern_fp.core.gz") {
		if err != nil {
			continue // skipped or unreadable inputs are tested elsewhere
		}
		js, err := json.Marshal(r)
		require.NoError(t, err)
		validate(t, result, r.Location().String(), js)
		b.Add(r)
		n++
	}
	assert.Greater(t, n, 150)
	// The schema is not vacuous: a wrong enum value, a missing key and an
	// unknown key are refused.
	for _, bad := range []string{`"product":"mysql"`, `"schema_version":1,"extra_key":1`} {
		js, _ := json.Marshal(&Result{SchemaVersion: SchemaVersion, Crash: &symbolize.Crash{Product: "doris"}, Input: ContentText, Signature: &signature.Signature{}, Classification: &catalog.Verdict{Path: "scan", Status: catalog.StatusNoKnownDefect}})
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
		require.NoError(t, err)
		require.NoError(t, result.Validate(inst), "the well-formed one validates")
		js = bytes.Replace(bytes.Replace(js, []byte(`"product":"doris"`), []byte(bad), 1), []byte(`"schema_version":1`), []byte(bad), 1)
		inst, err = jsonschema.UnmarshalJSON(bytes.NewReader(js))
		require.NoError(t, err)
		assert.Error(t, result.Validate(inst), bad)
	}
	for _, bk := range b.Buckets(0.8) {
		js, err := json.Marshal(bk)
		require.NoError(t, err)
		validate(t, bucket, "bucket "+bk.ID, js)
	}
}

// TestSchemaCoversTypes fails when a JSON key of Result or Bucket (or of a
// type they hold) has no property in the schema, or the schema names a key
// the types do not have: the schema is updated with the types.
func TestSchemaCoversTypes(t *testing.T) {
	raw, err := os.ReadFile(schemaFile)
	require.NoError(t, err)
	var sch struct {
		Defs map[string]struct {
			Properties map[string]any `json:"properties"`
		} `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal(raw, &sch))
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	check := func(typ reflect.Type) {
		def, ok := sch.Defs[strings.ToLower(typ.Name())]
		if !assert.True(t, ok, "no $defs/%s for %s", strings.ToLower(typ.Name()), typ) {
			return
		}
		keys := jsonKeys(typ)
		for _, k := range keys {
			assert.Contains(t, def.Properties, k, "%s.%s", typ, k)
		}
		for k := range def.Properties {
			assert.True(t, slices.Contains(keys, k), "schema $defs/%s has %q, which %s does not encode", strings.ToLower(typ.Name()), k, typ)
		}
	}
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] || typ.PkgPath() == "time" {
			return
		}
		seen[typ] = true
		check(typ)
		for _, f := range fieldsOf(typ) {
			walk(f.Type)
		}
	}
	walk(reflect.TypeOf(Result{}))
	walk(reflect.TypeOf(Bucket{}))
}

// fieldsOf returns the JSON-encoded fields of typ, embedded ones flattened.
func fieldsOf(typ reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		if f.Anonymous && tag == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			out = append(out, fieldsOf(et)...)
			continue
		}
		out = append(out, f)
	}
	return out
}

func jsonKeys(typ reflect.Type) []string {
	var keys []string
	for _, f := range fieldsOf(typ) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		keys = append(keys, name)
	}
	return keys
}

// TestEncoderMatchesCLI: NewEncoder writes the Results of testdata/formats
// and the Buckets of the StarRocks corpus byte for byte as the CLI's
// classify --json and buckets --json (the goldens of examples/crashsig,
// read from that directory so that the sources are spelled alike); a
// default json.Encoder does not (it escapes <, > and &).
func TestEncoderMatchesCLI(t *testing.T) {
	want, err := os.ReadFile("../testdata/golden/crashsig/classify-formats.jsonl")
	require.NoError(t, err)
	wantBuckets, err := os.ReadFile("../testdata/golden/crashsig/buckets-starrocks.jsonl")
	require.NoError(t, err)
	t.Chdir("../examples/crashsig")
	p := newPipeline(t, Options{})
	var got, plain bytes.Buffer
	enc, def := NewEncoder(&got), json.NewEncoder(&plain)
	for r, err := range p.Run(context.Background(), nil, "../../testdata/formats") {
		require.NoError(t, err)
		require.NoError(t, enc.Encode(r))
		require.NoError(t, def.Encode(r))
	}
	assert.Equal(t, string(want), got.String())
	assert.NotEqual(t, string(want), plain.String(), "the default encoder escapes HTML characters")

	// buckets --json: crashes only (no --all), threshold 0.8.
	b := NewBucketer()
	for r, err := range p.Run(context.Background(), nil, "../../testdata/corpus/starrocks") {
		require.NoError(t, err)
		switch r.Kind {
		case symbolize.KindThreadDump, symbolize.KindTermination, symbolize.KindLeak:
			continue
		}
		b.Add(r)
	}
	got.Reset()
	for _, bk := range b.Buckets(0.8) {
		require.NoError(t, enc.Encode(bk))
	}
	assert.Equal(t, string(wantBuckets), got.String())
}

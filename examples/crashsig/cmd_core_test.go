package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashsig/crashsig/internal/testutil"
	"github.com/crashsig/crashsig/symbolize"
)

// gunzipFixture decompresses a committed .gz fixture (a path relative to
// this package) into dir and returns the new file's path.
func gunzipFixture(t *testing.T, src, dir string) string {
	return testutil.Gunzip(t, src, filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".gz")))
}

// gunzipCoreFixture decompresses a fixture of testdata/core into dir.
func gunzipCoreFixture(t *testing.T, dir, rel string) string {
	t.Helper()
	return gunzipFixture(t, filepath.Join("../../testdata/core", rel), dir)
}

func TestCmdCore(t *testing.T) {
	dir := t.TempDir()
	core := gunzipCoreFixture(t, dir, "cores/kerna_fp.core.gz")
	args := []string{core, "--no-host-files",
		"--binary", gunzipCoreFixture(t, dir, "bin/sim_fp.gz"),
		"--binary", gunzipCoreFixture(t, dir, "lib/libc.so.6.gz"),
		"--binary", gunzipCoreFixture(t, dir, "lib/ld-linux-x86-64.so.2.gz")}
	var out, errb bytes.Buffer
	if code := cmdCore(context.Background(), args, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	text := out.String()
	for _, want := range []string{"signal SIGSEGV (SEGV_MAPERR) fault address 0x40", "[crashed]", "<signal handler called>", "starrocks::ParsedPageV1::read", "RunLightTimerTask"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	out.Reset()
	if code := cmdCore(context.Background(), append(args, "--json"), nil, &out, &errb); code != 0 {
		t.Fatalf("--json exit %d: %s", code, errb.String())
	}
	var cr symbolize.Crash
	if err := json.Unmarshal(out.Bytes(), &cr); err != nil {
		t.Fatal(err)
	}
	if cr.Kind != symbolize.KindSignal || cr.Signal != "SIGSEGV" || len(cr.Threads) != 8 || !cr.Threads[0].Crashed {
		t.Errorf("json: kind %s signal %s threads %d", cr.Kind, cr.Signal, len(cr.Threads))
	}
	if code := cmdCore(context.Background(), nil, nil, &out, &errb); code != 2 {
		t.Errorf("no args: exit %d", code)
	}
	if code := cmdCore(context.Background(), []string{filepath.Join(dir, "missing")}, nil, &out, &errb); code != 1 {
		t.Errorf("missing core: exit %d", code)
	}
}

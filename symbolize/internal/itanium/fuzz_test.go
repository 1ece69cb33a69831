package itanium

import (
	"bytes"
	"testing"
)

// safeReference is reference with the reference's own panics turned into
// a rejection.
func safeReference(name string) (s string, ok bool) {
	defer func() {
		if recover() != nil {
			s, ok = "", false
		}
	}()
	return reference(name)
}

func FuzzAppendDemangle(f *testing.F) {
	for _, s := range loadNames(f) {
		for i, name := range s.names {
			if i%25 == 0 {
				f.Add(name)
			}
		}
	}
	var d Demangler
	f.Fuzz(func(t *testing.T, name string) {
		got, ok := d.AppendDemangle([]byte("prefix"), name)
		if d.recovered != nil {
			t.Fatalf("internal panic: %v", d.recovered)
		}
		if !bytes.HasPrefix(got, []byte("prefix")) {
			t.Fatalf("dst prefix lost: %q", got)
		}
		got = got[len("prefix"):]
		if !ok {
			if len(got) != 0 {
				t.Fatalf("ok=false but dst grew by %q", got)
			}
			return
		}
		if len(got) > maxOutput {
			t.Fatalf("output of %d bytes", len(got))
		}
		want, refOK := safeReference(name)
		if !refOK || string(got) != want {
			t.Fatalf("got %q\nwant %q (reference ok=%v)", got, want, refOK)
		}
		again, ok2 := d.AppendDemangle(nil, name)
		if !ok2 || !bytes.Equal(again, got) {
			t.Fatalf("not deterministic: %q/%v then %q/%v", got, ok, again, ok2)
		}
	})
}

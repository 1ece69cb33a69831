package catalog

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fillExported sets every exported slice field of the struct v points to
// (and of the structs its exported pointer fields point to, allocated) to a
// one-element slice, so that a clone that forgets a field shares it.
func fillExported(t *testing.T, v reflect.Value) {
	t.Helper()
	v = v.Elem()
	for i := range v.NumField() {
		f, sf := v.Field(i), v.Type().Field(i)
		if !sf.IsExported() {
			continue
		}
		switch f.Kind() {
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
			if e := f.Index(0); e.Kind() == reflect.Struct {
				fillExported(t, e.Addr())
			}
		case reflect.Pointer:
			if f.Type().Elem().Kind() == reflect.Struct {
				f.Set(reflect.New(f.Type().Elem()))
				fillExported(t, f)
			}
		}
	}
}

// assertOwnSlices fails for every exported slice (or pointed-to struct) of
// a that b shares: a caller writing into a copy would change the original.
func assertOwnSlices(t *testing.T, path string, a, b reflect.Value) {
	t.Helper()
	for i := range a.NumField() {
		sf := a.Type().Field(i)
		if !sf.IsExported() {
			continue
		}
		fa, fb := a.Field(i), b.Field(i)
		name := path + "." + sf.Name
		switch fa.Kind() {
		case reflect.Slice:
			require.Equal(t, 1, fa.Len(), name)
			assert.NotEqual(t, fa.Pointer(), fb.Pointer(), "%s is shared by the copy", name)
			if fa.Index(0).Kind() == reflect.Struct {
				assertOwnSlices(t, name+"[0]", fa.Index(0), fb.Index(0))
			}
		case reflect.Pointer:
			if fa.Type().Elem().Kind() == reflect.Struct {
				assert.NotEqual(t, fa.Pointer(), fb.Pointer(), "%s is shared by the copy", name)
				assertOwnSlices(t, name, fa.Elem(), fb.Elem())
			}
		}
	}
}

// TestCloneOwnsEverySlice: Defect.clone and PathRule.clone copy every
// exported slice and pointed-to struct, the ones there are today and any
// added later (the immutability of a Catalog rests on them, and a field
// list written by hand forgets the next field).
func TestCloneOwnsEverySlice(t *testing.T) {
	var d Defect
	fillExported(t, reflect.ValueOf(&d))
	dc := d.clone()
	assertOwnSlices(t, "Defect", reflect.ValueOf(d), reflect.ValueOf(dc))

	var r PathRule
	fillExported(t, reflect.ValueOf(&r))
	rc := r.clone()
	assertOwnSlices(t, "PathRule", reflect.ValueOf(r), reflect.ValueOf(rc))
}

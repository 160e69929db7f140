package jobdir

import (
	"reflect"
	"testing"
	"time"
)

// TestCloneMetaSharesNothing: every slice, map and pointer of a Meta is
// copied by cloneMeta, whatever fields Meta gains: a field added without
// its copy fails here, not in a caller that changed a memoized Meta.
func TestCloneMetaSharesNothing(t *testing.T) {
	var m Meta
	v := reflect.ValueOf(&m).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Slice:
			s := reflect.MakeSlice(f.Type(), 1, 1)
			f.Set(s)
		case reflect.Map:
			mp := reflect.MakeMap(f.Type())
			mp.SetMapIndex(reflect.New(f.Type().Key()).Elem(), reflect.New(f.Type().Elem()).Elem())
			f.Set(mp)
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
			t.Fatalf("Meta.%s: a %s, which cloneMeta cannot copy", v.Type().Field(i).Name, f.Kind())
		}
	}
	c := cloneMeta(m)
	if !reflect.DeepEqual(c, m) {
		t.Fatalf("clone %+v, want %+v", c, m)
	}
	cv := reflect.ValueOf(c)
	for i := range v.NumField() {
		f, g := v.Field(i), cv.Field(i)
		switch f.Kind() {
		case reflect.Slice, reflect.Map, reflect.Pointer:
			if f.UnsafePointer() == g.UnsafePointer() {
				t.Errorf("Meta.%s: the clone shares it", v.Type().Field(i).Name)
			}
		}
	}
}

// TestDecodeMetaLineMemo: a line decoded again gives the same Meta, and
// a caller's change to one does not reach the next.
func TestDecodeMetaLineMemo(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	b, err := EncodeMeta(Meta{Version: 1, ID: "20261208T000000-aaaaaa", Env: []string{"A=1"}, Labels: map[string]string{"k": "v"}, QueuedAt: &now})
	if err != nil {
		t.Fatal(err)
	}
	line := string(b)
	a, err := decodeMetaLine(line)
	if err != nil {
		t.Fatal(err)
	}
	a.Env[0], a.Labels["k"] = "B=2", "w"
	*a.QueuedAt = now.Add(time.Hour)
	c, err := decodeMetaLine(line)
	if err != nil {
		t.Fatal(err)
	}
	if c.Env[0] != "A=1" || c.Labels["k"] != "v" || !c.QueuedAt.Equal(now) {
		t.Errorf("the second decode: %+v; a change to the first reached it", c)
	}
}

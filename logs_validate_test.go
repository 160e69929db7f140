package bgjob_test

import (
	"errors"
	"testing"

	"github.com/bgjob/bgjob"
)

// LogOptions.Validate is the one home of the rules about how a read's
// options go together; the CLI and the MCP server word its FieldError with
// their own names.
func TestLogOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		o            bgjob.LogOptions
		field, other string
	}{
		{bgjob.LogOptions{}, "", ""},
		{bgjob.LogOptions{New: true, Tail: 3}, "", ""},
		{bgjob.LogOptions{Tail: bgjob.Zero}, "", ""},
		{bgjob.LogOptions{FromOffset: true}, "", ""},
		{bgjob.LogOptions{Tail: 1, Head: 1}, "Tail", "Head"},
		{bgjob.LogOptions{Head: 1, FromOffset: true}, "Head", "Offset"},
		{bgjob.LogOptions{Bytes: bgjob.Zero, New: true}, "Bytes", "New"},
		{bgjob.LogOptions{Tail: -2}, "Tail", ""},
		{bgjob.LogOptions{Offset: -1, FromOffset: true}, "Offset", ""},
		{bgjob.LogOptions{MaxBytes: -1}, "MaxBytes", ""},
		{bgjob.LogOptions{Reader: "r"}, "Reader", "New"},
		{bgjob.LogOptions{Hold: true}, "Hold", "New"},
		{bgjob.LogOptions{New: true, Follow: true}, "New", "Follow"},
	} {
		err := tc.o.Validate()
		if tc.field == "" {
			if err != nil {
				t.Errorf("%+v: %v, want nil", tc.o, err)
			}
			continue
		}
		var fe *bgjob.FieldError
		if !errors.As(err, &fe) || !errors.Is(err, bgjob.ErrUsage) || fe.Field != tc.field || fe.Other != tc.other {
			t.Errorf("%+v: %v (%+v), want a usage FieldError on %s and %q", tc.o, err, fe, tc.field, tc.other)
		}
	}
}

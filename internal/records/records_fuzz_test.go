package records

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/bgjob/bgjob/shellgen"
)

// fuzzRecord is a record as Decode gave it, with its data read.
type fuzzRecord struct {
	kind   Kind
	fields []string
	data   []byte
}

func decodeAll(b []byte) ([]fuzzRecord, error) {
	var recs []fuzzRecord
	err := Decode(bytes.NewReader(b), func(r Record) error {
		fr := fuzzRecord{kind: r.Kind, fields: slices.Clone(r.Fields)}
		if r.Data != nil {
			d, err := io.ReadAll(r.Data)
			if err != nil {
				return err
			}
			fr.data = d
		}
		recs = append(recs, fr)
		return nil
	})
	return recs, err
}

// esc is bg_esc (sh/lib/records.sh) in Go: backslash, newline and tab escaped.
func esc(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\t", `\t`).Replace(s)
}

// Whatever a host prints, Decode returns records of the vocabulary, each
// with its fields, or an error; and the records, printed again as the
// scripts print them, decode to the same records.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		shellgen.BeginMarker + "\nB\tboot-1\nJ\t/r/w/20261201T104053-b94t8p\nM\t{\"version\":1}\nP\t123\nX\t0\nL\t0 proc\n" + shellgen.EndMarker + "\n",
		"motd\n" + shellgen.BeginMarker + "\nE\tnotfound\ta\\tb\\\\c\\nd\\\n" + shellgen.EndMarker + "\n",
		shellgen.BeginMarker + "\nD\tstdout\t0\t5\t1\nab\ncdC\tstdout\t0\n" + shellgen.EndMarker + "\n",
		shellgen.BeginMarker + "\nD\tstdout\t0\t50\t0\nab",
		shellgen.BeginMarker + "\nD\tstdout\tx\t-1\t0\n",
		shellgen.BeginMarker + "\nQ\tunknown\n",
		shellgen.BeginMarker + "\nK\tlive\t/r/w/j\tx\n\n\nY\tstdout\n",
		"no marker at all",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := decodeAll(b)
		if err != nil && len(recs) > 0 && recs[len(recs)-1].kind == KindData && errors.Is(err, ErrTruncated) {
			recs = recs[:len(recs)-1] // its data was cut short
		}
		var out bytes.Buffer
		out.WriteString(shellgen.BeginMarker + "\n")
		for _, r := range recs {
			f, ok := fields[r.kind]
			if !ok || len(r.fields) != f.n {
				t.Fatalf("Decode(%q) gave record %q %q", b, r.kind, r.fields)
			}
			fs := slices.Clone(r.fields)
			for i, v := range fs {
				if i+1 == f.escaped {
					fs[i] = esc(v)
				} else if strings.Contains(v, "\n") || i+1 < f.n && strings.Contains(v, "\t") {
					t.Fatalf("Decode(%q) gave record %q with field %d %q", b, r.kind, i+1, v)
				}
			}
			out.WriteString(string(r.kind) + "\t" + strings.Join(fs, "\t") + "\n")
			out.Write(r.data)
		}
		out.WriteString(shellgen.EndMarker + "\n")
		again, err := decodeAll(out.Bytes())
		if err != nil {
			t.Fatalf("the records of %q, printed again as %q: %v", b, out.Bytes(), err)
		}
		if len(again) != len(recs) {
			t.Fatalf("the records of %q, printed again as %q: %d records, want %d", b, out.Bytes(), len(again), len(recs))
		}
		for i := range recs {
			if again[i].kind != recs[i].kind || !slices.Equal(again[i].fields, recs[i].fields) || !bytes.Equal(again[i].data, recs[i].data) {
				t.Fatalf("the records of %q, printed again as %q: record %d is %+v, want %+v", b, out.Bytes(), i, again[i], recs[i])
			}
		}
	})
}

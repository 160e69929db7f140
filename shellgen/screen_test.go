package shellgen_test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/jobdir/jobdirtest"
	"github.com/bgjob/bgjob/shellgen"
	"github.com/bgjob/bgjob/termtext"
)

// screenCases are terminal streams bg_screen must read as termtext does:
// each kind of sequence, each way one ends, and where they meet.
var screenCases = []string{
	"",
	"plain\n",
	"no newline at the end",
	">>> 6*7\r\n42\r\n>>> ",
	"\x1b[1;31mred\x1b[0m and \x1b[?2004hpaste\r\n",
	"\x1b]0;title\x07after\n\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ end\n",
	"\x1bP1$r0m\x1b\\dcs \x1bXsos\x07 \x1b^pm\x18 \x1b_apc\x1a.\n",
	"\x1b]unterminated to the line's end\nnext line\n",
	"\x1b]0;ends at an ESC\x1b[1mbold\n",
	"\x1b(B\x1b)0\x1b=\x1b>\x1b7\x1b8\x1b#8charsets and modes\n",
	"\x1b[3\rCR ends a CSI\r\n\x1b[12\x07BEL ends one too\n",
	"\x1b[1\x18CAN abandons\x1b(\x1aSUB too\n",
	"\x1b\x1b[m\x1b\x1b]x\x07 \x1b\x07 \x1b\r\n",
	"\x1b(\x1b]t\x07B text after a string\n",
	"progress 10%\rprogress 20%\r\x1b[Kdone\r\r\n",
	"a CSI cut off \x1b[1;3",
	"a string cut off \x1b]0;tit",
	"a lone ESC at the end \x1b",
	"NUL \x00 and \xff\xfe bytes \x1b[\x00m\n",
	"\x1b]" + string(bytes.Repeat([]byte("i"), 8000)) + "\x07after a long title\n",
}

// screenNoise returns n random bytes, most of them the ones sequences are
// made of, in lines shorter than termtext.MaxString.
func screenNoise(r *rand.Rand, n int) []byte {
	const alphabet = "\x1b\x1b\x1b\x1b[[]]P^_X\\\\\x07\x18\x1a\r\r\n\n;?0123456789 #()mHKa~@/:\x00\x7f\xff"
	b := make([]byte, n)
	for i := range b {
		if r.IntN(4) == 0 {
			b[i] = byte(r.IntN(256))
			continue
		}
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return b
}

// TestScreenIsTermtext holds bg_screen, the text of a PTY job's lines
// that wait_for.sh matches, to termtext, the one rule for a terminal's
// text: byte for byte termtext.Strip without the CRs it keeps, on the
// cases above and on random streams, under every shell, with the host's
// sed and with busybox's. (A string longer than termtext.MaxString is
// the one difference by design: bg_screen ends it at the line's end. And
// busybox's sed, whose regexec reads a line up to a NUL byte, ends a
// string at a NUL: its inputs have none.)
func TestScreenIsTermtext(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 9))
	inputs := make([][]byte, 0, len(screenCases)+200)
	for _, c := range screenCases {
		inputs = append(inputs, []byte(c))
	}
	for range 200 {
		inputs = append(inputs, screenNoise(r, r.IntN(400)))
	}
	for _, sed := range []struct {
		name string
		nul  bool
		dir  func(testing.TB) string
	}{
		{"host sed", true, func(testing.TB) string { return "" }},
		{"busybox sed", false, func(tb testing.TB) string { return applets(tb, "sed") }},
	} {
		dir := t.TempDir()
		var want, loop bytes.Buffer
		ins := make([][]byte, len(inputs))
		for i, in := range inputs {
			if !sed.nul {
				in = bytes.ReplaceAll(in, []byte{0}, []byte{1})
			}
			ins[i] = in
			f := filepath.Join(dir, strconv.Itoa(i))
			if err := os.WriteFile(f, in, 0o600); err != nil {
				t.Fatal(err)
			}
			want.Write(bytes.ReplaceAll(termtext.Strip(in), []byte("\r"), nil))
			want.WriteString("|end\n")
			// Each input through bg_screen, then a mark: the output of
			// one ends where the mark is.
			loop.WriteString("bg_screen <'" + f + "'; printf '|end\\n'\n")
		}
		script := shellgen.LibFunc("bg_screen") + shellgen.LibFunc("bg_screenexp") + loop.String()
		for _, sh := range allShells {
			t.Run(sed.name+"/"+sh.name, func(t *testing.T) {
				cmd := sh.command(t, "-c", script)
				if d := sed.dir(t); d != "" {
					cmd.Env = append(os.Environ(), "PATH="+d+string(os.PathListSeparator)+os.Getenv("PATH"))
				}
				out, err := cmd.Output()
				if err != nil {
					t.Fatal(err)
				}
				got, wantAll := bytes.Split(out, []byte("|end\n")), bytes.Split(want.Bytes(), []byte("|end\n"))
				if len(got) != len(wantAll) {
					t.Fatalf("%d outputs, want %d", len(got), len(wantAll))
				}
				for i := range ins {
					if !bytes.Equal(got[i], wantAll[i]) {
						t.Errorf("bg_screen of %q:\n got %q\nwant %q", ins[i], got[i], wantAll[i])
					}
				}
			})
		}
	}
}

// TestWaitForScriptScreenText: on a PTY job wait_for.sh matches the text
// of the terminal's lines, and reports the line's raw bytes at their
// offsets in the log: ^42$ finds an answer in colour, ^>>> $ a prompt
// drawn in bold that no newline ends yet, and a window's title (an OSC
// string) is not text. Under every shell.
func TestWaitForScriptScreenText(t *testing.T) {
	const (
		title  = "\x1b]0;repl\x07"
		typed  = "\x1b[1m>>>\x1b[0m 6*7\r\n"
		answer = "\x1b[32m42\x1b[0m\r\n"
		prompt = "\x1b[1m>>>\x1b[0m "
	)
	for _, sh := range allShells {
		t.Run(sh.name, func(t *testing.T) {
			sh.path(t)
			root := filepath.Join(t.TempDir(), "root")
			m := jobdirtest.Make(t, root, "w", jobdirtest.Job{State: jobdirtest.Exited, Meta: jobdir.Meta{PTY: true}, Stdout: title + typed + answer + prompt}).Meta
			for _, tc := range []struct {
				pattern string
				want    []chunk
			}{
				{"^42$", []chunk{{"stdout", int64(len(title + typed)), answer}}},
				{"^>>> 6[*]7$", []chunk{{"stdout", 0, title + typed}}},
				{"^>>> $", []chunk{{"stdout", int64(len(title + typed + answer)), prompt}}},
				{"repl", nil},
			} {
				script, err := shellgen.WaitForScript(shellgen.Target{Root: root, Workspace: "w"}, shellgen.WaitFor{Ref: m.ID, Pattern: tc.pattern})
				if err != nil {
					t.Fatal(err)
				}
				cmd := sh.command(t, "-c", script)
				present(t, cmd)
				out, err := cmd.Output()
				if err != nil {
					t.Fatal(err)
				}
				var got []chunk
				state := ""
				if _, err := (records.Handler{
					Wait: func(s string) { state = s },
					Data: func(st string, off int64, r io.Reader) error {
						b, err := io.ReadAll(r)
						got = append(got, chunk{st, off, string(b)})
						return err
					},
				}).Decode(bytes.NewReader(out)); err != nil {
					t.Fatalf("decoding: %v\n%q", err, out)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("%s: chunks (-want +got):\n%s", tc.pattern, diff)
				}
				if tc.want == nil && state != "ended" {
					t.Errorf("%s: state %q, want ended", tc.pattern, state)
				}
			}
		})
	}
}

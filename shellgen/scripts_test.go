package shellgen_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the generators")

// The goldens hold what Go decides for each script (shellgen.Anatomy): the
// variables it writes, the files of sh/ and the functions of sh/lib/ the
// script is made of. What the scripts do is tested by running them under
// every shell (allShells), not by their text.

const goldenID = "20261130T001502-k3f9q2"

func goldenMeta() jobdir.Meta {
	return jobdir.Meta{
		Version:   jobdir.Version,
		ID:        goldenID,
		Workspace: jobdir.DefaultWorkspace,
		Env:       []string{},
		StartedAt: time.Date(2026, 11, 30, 0, 15, 2, 123_000_000, time.UTC),
	}
}

var goldenTarget = shellgen.Target{Root: "/srv/bgjob", Workspace: jobdir.DefaultWorkspace}

// generators lists every script generator with representative specs; each
// has a golden file testdata/NAME.golden, its anatomy.
func generators() []struct {
	name string
	gen  func() (string, error)
} {
	launch := func(f func(*shellgen.Launch)) func() (string, error) {
		l := shellgen.Launch{Target: goldenTarget, Meta: goldenMeta()}
		f(&l)
		return func() (string, error) { return shellgen.LaunchScript(l) }
	}
	return []struct {
		name string
		gen  func() (string, error)
	}{
		{"launch_script", launch(func(l *shellgen.Launch) {
			l.Meta.Command = "echo hello; exit 3"
		})},
		{"launch_prune", launch(func(l *shellgen.Launch) {
			l.Meta.Command = "make"
			l.Prune = &shellgen.Prune{Keep: 1000, OlderThan: 7 * 24 * time.Hour}
		})},
		{"launch_shell", launch(func(l *shellgen.Launch) {
			l.Meta.Name = "zsh-job"
			l.Meta.Command = `print -r -- "$ZSH_VERSION"`
			l.Meta.Shell = "/bin/zsh"
		})},
		{"launch_replace", launch(func(l *shellgen.Launch) {
			l.Meta.Name = "web"
			l.Meta.Argv = []string{"busybox", "nc", "-l", "-p", "8000"}
			l.Meta.Command, _ = shellgen.QuoteArgv(l.Meta.Argv)
			l.Replace = true
			l.Grace = 1500 * time.Millisecond
		})},
		{"launch_argv", launch(func(l *shellgen.Launch) {
			l.Meta.Argv = []string{"printf", `%s\n`, "it's", "-n", "a b", "if"}
			l.Meta.Command, _ = shellgen.QuoteArgv(l.Meta.Argv)
		})},
		{"launch_timeout_env_cwd", launch(func(l *shellgen.Launch) {
			l.Target = shellgen.Target{Workspace: "ws"}
			l.Meta.Workspace = "ws"
			l.Meta.Name = "build"
			l.Meta.Argv = []string{"make", "-j4"}
			l.Meta.Command = "make -j4"
			l.Meta.Cwd = "-src dir"
			l.Meta.Env = []string{"CC", "CFLAGS", "QUOTE"}
			l.Env = []string{"CC=gcc", "CFLAGS=-O2 -g", "QUOTE=it's \"x\"\n$HOME"}
			l.Meta.Timeout = "1m30s"
			l.Timeout = 90 * time.Second
			l.Grace = 2 * time.Second
		})},
		{"launch_pty", launch(func(l *shellgen.Launch) {
			l.Meta.Name = "repl"
			l.Meta.Command = "python3 -i"
			l.Meta.Stdin, l.Meta.PTY, l.Meta.PTYCols, l.Meta.PTYRows = true, true, 120, 40
		})},
		{"launch_limits", launch(func(l *shellgen.Launch) {
			l.Meta.Command = "./fuzz"
			l.Meta.Labels = map[string]string{"team": "a", "mcp.client": "it's \"x\""}
			l.Meta.Ulimits = []jobdir.Ulimit{{Name: "nofile", Soft: 64, Hard: 128}, {Name: "fsize", Soft: 1 << 20, Hard: jobdir.Unlimited}}
			l.Cgroup = true
		})},
		{"launch_script_timeout_fraction", launch(func(l *shellgen.Launch) {
			l.Meta.Command = "sleep 10"
			l.Meta.Cwd = "/work dir"
			l.Meta.Timeout = "1.5s"
			l.Timeout = 1500 * time.Millisecond
			l.Grace = 250 * time.Millisecond
		})},
		{"status", func() (string, error) {
			return shellgen.StatusScript(goldenTarget, []string{"build", goldenID})
		}},
		{"resize", func() (string, error) {
			return shellgen.ResizeScript(goldenTarget, shellgen.Resize{Ref: "repl", Cols: 100, Rows: 30})
		}},
		{"ready", func() (string, error) {
			return shellgen.ReadyScript(goldenTarget, shellgen.Ready{Ref: "web", At: time.Date(2026, 12, 7, 14, 3, 4, 5006007, time.UTC)})
		}},
		{"port_auto", func() (string, error) {
			return shellgen.PortScript(goldenTarget, shellgen.Port{ID: goldenID, From: 24680})
		}},
		{"unport", func() (string, error) {
			return shellgen.UnportScript(goldenTarget, goldenID, 24680)
		}},
		{"status_ports", func() (string, error) {
			return text(shellgen.StatusOf(goldenTarget, shellgen.Status{Refs: []string{goldenID}, Ports: true}))
		}},
		{"list_workspace", func() (string, error) {
			return shellgen.ListScript(goldenTarget, shellgen.List{})
		}},
		{"list_all_workspaces", func() (string, error) {
			return shellgen.ListScript(shellgen.Target{Root: "/srv/bgjob"}, shellgen.List{AllWorkspaces: true, Before: goldenID, Max: 11})
		}},
		{"stop_refs", func() (string, error) {
			return shellgen.StopScript(goldenTarget, shellgen.Stop{Refs: []string{"build", goldenID}, Signal: "sigint", Grace: 2 * time.Second})
		}},
		{"stop_all", func() (string, error) {
			return shellgen.StopScript(goldenTarget, shellgen.Stop{All: true, Signal: "9", Grace: 150 * time.Millisecond})
		}},
		{"wait_all", func() (string, error) {
			return shellgen.WaitScript(goldenTarget, shellgen.Wait{Refs: []string{"build", goldenID}})
		}},
		{"wait_any_timeout", func() (string, error) {
			return shellgen.WaitScript(goldenTarget, shellgen.Wait{Refs: []string{"build", "test"}, Any: true, Timeout: 30 * time.Second})
		}},
		{"watch_workspace", func() (string, error) {
			return shellgen.WatchScript(goldenTarget, shellgen.Watch{})
		}},
		{"watch_refs", func() (string, error) {
			return shellgen.WatchScript(goldenTarget, shellgen.Watch{Refs: []string{"build", goldenID}})
		}},
		{"logs_plain", func() (string, error) {
			return shellgen.LogsScript(goldenTarget, shellgen.Logs{Ref: "build"})
		}},
		{"logs_tail_stderr", func() (string, error) {
			return shellgen.LogsScript(goldenTarget, shellgen.Logs{Ref: "build", Streams: []string{"stderr"}, Tail: 20})
		}},
		{"logs_follow", func() (string, error) {
			return shellgen.LogsScript(goldenTarget, shellgen.Logs{Ref: goldenID, Follow: true})
		}},
		{"logs_follow_tail", func() (string, error) {
			return shellgen.LogsScript(goldenTarget, shellgen.Logs{Ref: "build", Streams: []string{"stdout", "stderr"}, Follow: true, Tail: 5})
		}},
		{"logs_head", func() (string, error) {
			return shellgen.LogsScript(goldenTarget, shellgen.Logs{Ref: "build", Head: 10})
		}},
		{"logs_bytes", func() (string, error) {
			return shellgen.LogsScript(goldenTarget, shellgen.Logs{Ref: "build", Bytes: 4096})
		}},
		{"logs_offset_both", func() (string, error) {
			return shellgen.LogsScript(goldenTarget, shellgen.Logs{Ref: "build", Streams: []string{"stdout", "stderr"}, Offsets: map[string]int64{"stdout": 1234, "stderr": 99}, HasOffset: true})
		}},
		{"logs_new_follow", func() (string, error) {
			return shellgen.LogsScript(goldenTarget, shellgen.Logs{Ref: "build", New: true, Reader: "agent-1", Follow: true})
		}},
		{"logs_new_tail_max", func() (string, error) {
			return shellgen.LogsScript(goldenTarget, shellgen.Logs{Ref: "build", Streams: []string{"stdout", "stderr"}, New: true, Tail: 3, MaxBytes: 65536})
		}},
		{"wait_for", func() (string, error) {
			return shellgen.WaitForScript(goldenTarget, shellgen.WaitFor{Ref: "server", Pattern: `listening on :[0-9]+|it's "ready"`, Timeout: 30 * time.Second})
		}},
		{"remove_refs", func() (string, error) {
			return shellgen.RemoveScript(goldenTarget, shellgen.Remove{Refs: []string{"build", goldenID}, Force: true, Grace: 2 * time.Second})
		}},
		{"remove_dirs", func() (string, error) {
			return shellgen.RemoveScript(goldenTarget, shellgen.Remove{Dirs: []string{
				"/srv/bgjob/default/" + goldenID, "/srv/bgjob/default/it's a dir",
			}})
		}},
	}
}

func TestGolden(t *testing.T) {
	for _, g := range generators() {
		t.Run(g.name, func(t *testing.T) {
			script, err := g.gen()
			if err != nil {
				t.Fatal(err)
			}
			got, err := shellgen.Anatomy(script)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join("testdata", g.name+".golden")
			if *update {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("what Go decides for the script differs from %s (-want +got); run go test -update if the change is intended:\n%s", file, diff)
			}
		})
	}
}

// TestGoldenFilesUsed catches golden files that no generator writes any more.
func TestGoldenFilesUsed(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.golden"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, g := range generators() {
		names[g.name] = true
	}
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".golden"); !names[name] {
			t.Errorf("%s belongs to no generator", f)
		}
	}
}

func TestScriptsParse(t *testing.T) {
	for _, g := range generators() {
		t.Run(g.name, func(t *testing.T) {
			script, err := g.gen()
			if err != nil {
				t.Fatal(err)
			}
			checkSyntax(t, script)
		})
	}
}

func TestGeneratorsReject(t *testing.T) {
	launch := func(f func(*shellgen.Launch)) func() (string, error) {
		l := shellgen.Launch{Target: goldenTarget, Meta: goldenMeta()}
		l.Meta.Command = "true"
		f(&l)
		return func() (string, error) { return shellgen.LaunchScript(l) }
	}
	tests := []struct {
		name string
		gen  func() (string, error)
		is   error // the error must wrap it, when not nil
	}{
		{"replace without a name", launch(func(l *shellgen.Launch) { l.Replace = true }), nil},
		{"relative root", func() (string, error) {
			return shellgen.StatusScript(shellgen.Target{Root: "srv", Workspace: "w"}, []string{"x"})
		}, nil},
		{"root with newline", func() (string, error) {
			return shellgen.StatusScript(shellgen.Target{Root: "/srv\n/x", Workspace: "w"}, []string{"x"})
		}, nil},
		{"root with NUL", func() (string, error) {
			return shellgen.ListScript(shellgen.Target{Root: "/srv\x00"}, shellgen.List{AllWorkspaces: true})
		}, nil},
		{"bad workspace", func() (string, error) {
			return shellgen.ListScript(shellgen.Target{Root: "/srv", Workspace: "../etc"}, shellgen.List{})
		}, jobdir.ErrBadName},
		{"status ref with slash", func() (string, error) {
			return shellgen.StatusScript(goldenTarget, []string{"ok", "../x"})
		}, jobdir.ErrBadName},
		{"stop ref with glob", func() (string, error) {
			return shellgen.StopScript(goldenTarget, shellgen.Stop{Refs: []string{"*"}, Signal: "TERM"})
		}, jobdir.ErrBadName},
		{"ready ref with slash", func() (string, error) {
			return shellgen.ReadyScript(goldenTarget, shellgen.Ready{Ref: "../x", At: time.Now()})
		}, jobdir.ErrBadName},
		{"ready without its time", func() (string, error) {
			return shellgen.ReadyScript(goldenTarget, shellgen.Ready{Ref: "web"})
		}, nil},
		{"port id with slash", func() (string, error) {
			return shellgen.PortScript(goldenTarget, shellgen.Port{ID: "../x"})
		}, jobdir.ErrBadName},
		{"unport of no port", func() (string, error) {
			return shellgen.UnportScript(goldenTarget, goldenID, 0)
		}, nil},
		{"port out of range", func() (string, error) {
			return shellgen.PortScript(goldenTarget, shellgen.Port{ID: goldenID, Port: 70000})
		}, nil},
		{"stop with unsupported signal", func() (string, error) {
			return shellgen.StopScript(goldenTarget, shellgen.Stop{All: true, Signal: "STOP"})
		}, nil},
		{"wait ref with space", func() (string, error) {
			return shellgen.WaitScript(goldenTarget, shellgen.Wait{Refs: []string{"a b"}})
		}, jobdir.ErrBadName},
		{"logs ref with command substitution", func() (string, error) {
			return shellgen.LogsScript(goldenTarget, shellgen.Logs{Ref: "$(reboot)"})
		}, jobdir.ErrBadName},
		{"logs unknown stream", func() (string, error) {
			return shellgen.LogsScript(goldenTarget, shellgen.Logs{Ref: "build", Streams: []string{"stdlog"}})
		}, nil},
		{"wait for a pattern with a newline", func() (string, error) {
			return shellgen.WaitForScript(goldenTarget, shellgen.WaitFor{Ref: "build", Pattern: "a\nb"})
		}, nil},
		{"logs bad reader name", func() (string, error) {
			return shellgen.LogsScript(goldenTarget, shellgen.Logs{Ref: "build", New: true, Reader: "../x"})
		}, jobdir.ErrBadName},
		{"list cursor that is not an id", func() (string, error) {
			return shellgen.ListScript(goldenTarget, shellgen.List{Before: "build"})
		}, nil},
		{"remove ref with leading dash", func() (string, error) {
			return shellgen.RemoveScript(goldenTarget, shellgen.Remove{Refs: []string{"-rf"}})
		}, jobdir.ErrBadName},
		{"remove relative dir", func() (string, error) {
			return shellgen.RemoveScript(goldenTarget, shellgen.Remove{Dirs: []string{"default/x"}})
		}, nil},
		{"remove dir with newline", func() (string, error) {
			return shellgen.RemoveScript(goldenTarget, shellgen.Remove{Dirs: []string{"/srv/a\nb"}})
		}, nil},
		{"remove dir with NUL", func() (string, error) {
			return shellgen.RemoveScript(goldenTarget, shellgen.Remove{Dirs: []string{"/srv/a\x00"}})
		}, nil},
		{"launch bad id", launch(func(l *shellgen.Launch) { l.Meta.ID = "../x" }), jobdir.ErrBadName},
		{"launch empty id", launch(func(l *shellgen.Launch) { l.Meta.ID = "" }), jobdir.ErrBadName},
		{"launch bad name", launch(func(l *shellgen.Launch) { l.Meta.Name = ".x" }), jobdir.ErrBadName},
		{"launch bad workspace", launch(func(l *shellgen.Launch) { l.Target.Workspace = "a/b" }), jobdir.ErrBadName},
		{"launch env without =", launch(func(l *shellgen.Launch) { l.Env = []string{"FOO"} }), nil},
		{"launch env name with digit first", launch(func(l *shellgen.Launch) { l.Env = []string{"1X=a"} }), nil},
		{"launch env name with dash", launch(func(l *shellgen.Launch) { l.Env = []string{"A-B=a"} }), nil},
		{"launch env name empty", launch(func(l *shellgen.Launch) { l.Env = []string{"=a"} }), nil},
		{"launch env name with command", launch(func(l *shellgen.Launch) { l.Env = []string{"$(id)=a"} }), nil},
		{"launch env value NUL", launch(func(l *shellgen.Launch) { l.Env = []string{"A=a\x00"} }), shellgen.ErrNUL},
		{"launch command NUL", launch(func(l *shellgen.Launch) { l.Meta.Command = "echo \x00" }), shellgen.ErrNUL},
		{"launch argv NUL", launch(func(l *shellgen.Launch) { l.Meta.Argv = []string{"echo", "\x00"} }), shellgen.ErrNUL},
		{"launch shell NUL", launch(func(l *shellgen.Launch) { l.Meta.Shell = "/bin/\x00sh" }), shellgen.ErrNUL},
		{"launch cwd NUL", launch(func(l *shellgen.Launch) { l.Meta.Cwd = "/tmp/\x00" }), shellgen.ErrNUL},
		{"launch argv word over the kernel's limit", launch(func(l *shellgen.Launch) {
			l.Meta.Argv = []string{"echo", "a", strings.Repeat("x", shellgen.MaxArg+1)}
		}), shellgen.ErrTooLong},
		{"launch env entry over the kernel's limit", launch(func(l *shellgen.Launch) {
			l.Env = []string{"A=" + strings.Repeat("x", shellgen.MaxArg-1)}
		}), shellgen.ErrTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script, err := tt.gen()
			if err == nil {
				t.Fatalf("got a script, want an error:\n%s", script)
			}
			if script != "" {
				t.Errorf("got a script along with error %v", err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v does not wrap %v", err, tt.is)
			}
		})
	}
}

func TestValidEnvName(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"A", true}, {"_", true}, {"_a1", true}, {"PATH", true}, {"lower_case", true},
		{"", false}, {"1A", false}, {"A-B", false}, {"A B", false}, {"A=B", false}, {"Ä", false}, {"A\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := shellgen.ValidEnvName(tt.in); got != tt.want {
				t.Errorf("ValidEnvName(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

// TestRequestsCheckAtOnce: a look's script is checked when it is asked for,
// not when its text is made (a look made in Go makes none), and its text
// is the verb's script.
func TestRequestsCheckAtOnce(t *testing.T) {
	bad := []struct {
		name string
		look func() (shellgen.Request, error)
	}{
		{"status ref with slash", func() (shellgen.Request, error) {
			return shellgen.StatusRequest(goldenTarget, []string{"ok", "../x"})
		}},
		{"status root with newline", func() (shellgen.Request, error) {
			return shellgen.StatusRequest(shellgen.Target{Root: "/srv\n/x", Workspace: "w"}, []string{"x"})
		}},
		{"list bad workspace", func() (shellgen.Request, error) {
			return shellgen.ListRequest(shellgen.Target{Root: "/srv", Workspace: "../etc"}, shellgen.List{})
		}},
		{"list cursor that is not an id", func() (shellgen.Request, error) {
			return shellgen.ListRequest(goldenTarget, shellgen.List{Before: "build"})
		}},
		{"logs unknown stream", func() (shellgen.Request, error) {
			return shellgen.LogsRequest(goldenTarget, shellgen.Logs{Ref: "build", Streams: []string{"stdlog"}})
		}},
		{"logs root with NUL", func() (shellgen.Request, error) {
			return shellgen.LogsRequest(shellgen.Target{Root: "/srv\x00"}, shellgen.Logs{Ref: "build"})
		}},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.look(); err == nil {
				t.Fatal("got a look, want an error")
			}
		})
	}
	logs := shellgen.Logs{Ref: goldenID, Streams: []string{"stdout", "stderr"}, Tail: 10}
	same := []struct {
		name   string
		look   func() (shellgen.Request, error)
		script func() (string, error)
	}{
		{"status", func() (shellgen.Request, error) {
			return shellgen.StatusRequest(goldenTarget, []string{goldenID, "build"})
		},
			func() (string, error) { return shellgen.StatusScript(goldenTarget, []string{goldenID, "build"}) }},
		{"list", func() (shellgen.Request, error) { return shellgen.ListRequest(goldenTarget, shellgen.List{Max: 20}) },
			func() (string, error) { return shellgen.ListScript(goldenTarget, shellgen.List{Max: 20}) }},
		{"logs", func() (shellgen.Request, error) { return shellgen.LogsRequest(goldenTarget, logs) },
			func() (string, error) { return shellgen.LogsScript(goldenTarget, logs) }},
	}
	for _, tt := range same {
		t.Run(tt.name, func(t *testing.T) {
			l, err := tt.look()
			if err != nil {
				t.Fatal(err)
			}
			want, err := tt.script()
			if err != nil {
				t.Fatal(err)
			}
			if got := l.Text(); got != want {
				t.Errorf("the look's text differs from the script:\n%s", cmp.Diff(want, got))
			}
			if l.Text() != want {
				t.Error("a second Text differs from the first")
			}
		})
	}
}

// TestRequestParams: a request says what it asks (Params), with its
// defaults filled in as its script has them, and where (Target); a launch
// request carries the files its launch writes.
func TestRequestParams(t *testing.T) {
	status, err := shellgen.StatusRequest(goldenTarget, []string{goldenID, "build"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(shellgen.Status{Refs: []string{goldenID, "build"}}, status.Params()); diff != "" {
		t.Errorf("status params (-want +got):\n%s", diff)
	}
	if status.Target() != goldenTarget {
		t.Errorf("target %+v, want %+v", status.Target(), goldenTarget)
	}
	wait, err := shellgen.WaitRequest(goldenTarget, shellgen.Wait{Refs: []string{goldenID}, Once: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(shellgen.Wait{Refs: []string{goldenID}, Once: true}, wait.Params()); diff != "" {
		t.Errorf("wait params (-want +got):\n%s", diff)
	}
	list, err := shellgen.ListRequest(goldenTarget, shellgen.List{Max: 3})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(shellgen.List{Max: 3}, list.Params()); diff != "" {
		t.Errorf("list params (-want +got):\n%s", diff)
	}
	logs, err := shellgen.LogsRequest(goldenTarget, shellgen.Logs{Ref: "build", New: true})
	if err != nil {
		t.Fatal(err)
	}
	want := shellgen.Logs{Ref: "build", New: true, Streams: []string{"stdout"}, Reader: "default"}
	if diff := cmp.Diff(want, logs.Params()); diff != "" {
		t.Errorf("logs params, defaults filled in (-want +got):\n%s", diff)
	}
	l := shellgen.Launch{Target: goldenTarget, Meta: jobdir.Meta{ID: goldenID, Argv: []string{"true"}}}
	launch, err := shellgen.LaunchRequest(l)
	if err != nil {
		t.Fatal(err)
	}
	files, err := l.Files()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(files, launch.Files()); diff != "" {
		t.Errorf("launch files (-want +got):\n%s", diff)
	}
	script, err := shellgen.LaunchScript(l)
	if err != nil {
		t.Fatal(err)
	}
	if launch.Text() != script {
		t.Error("the launch request's text differs from LaunchScript's")
	}
}

// text is the text of a request, or its error.
func text(r shellgen.Request, err error) (string, error) {
	if err != nil {
		return "", err
	}
	return r.Text(), nil
}

package containertest

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bgjob/bgjob/internal/testneed"
)

func TestSharedLibs(t *testing.T) {
	for _, tc := range []struct {
		name, ldd string
		want      []string
		err       string
	}{
		{"bash", "\tlinux-vdso.so.1 (0x00007f31d4658000)\n\tlibtinfo.so.6 => /lib/x86_64-linux-gnu/libtinfo.so.6 (0x00007f31d44d4000)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f31d42f2000)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f31d465a000)\n",
			[]string{"/lib/x86_64-linux-gnu/libtinfo.so.6", "/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"}, ""},
		{"arm64", "\tlinux-vdso.so.1 (0x0000ffff9a0d6000)\n\tlibc.so.6 => /lib/aarch64-linux-gnu/libc.so.6 (0x0000ffff99f30000)\n\t/lib/ld-linux-aarch64.so.1 (0x0000ffff9a099000)\n",
			[]string{"/lib/aarch64-linux-gnu/libc.so.6", "/lib/ld-linux-aarch64.so.1"}, ""},
		{"not found", "\tlibgone.so.1 => not found\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f31d42f2000)\n", nil, "libgone.so.1 not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sharedLibs(tc.ldd)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("libraries (-want +got):\n%s", d)
			}
		})
	}
}

// TestPTYRootfs: the PTY image's file system has dash as /bin/sh, the
// host's script, flock, fallocate and bash in place of busybox's applets,
// busybox's other applets, and the dynamic loader bash names.
func TestPTYRootfs(t *testing.T) {
	if _, err := StaticBusybox(); err != nil {
		testneed.Missing(t, "containertest: %v", err)
	}
	b, err := PTYRootfs()
	if err != nil {
		testneed.Missing(t, "containertest: %v", err)
	}
	files := map[string]*tar.Header{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimSuffix(h.Name, "/")] = h
	}
	bash, _ := exec.LookPath("bash")
	f, err := elf.Open(bash)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var loader string
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b, _ := io.ReadAll(p.Open())
			loader = strings.TrimRight(string(b), "\x00")
		}
	}
	if loader == "" {
		t.Fatalf("%s names no loader", bash)
	}
	for name, want := range map[string]string{
		"bin/sh": "->dash", "bin/dash": "file", "bin/bash": "file", "bin/script": "file", "bin/flock": "file",
		"bin/fallocate": "file", "bin/setsid": "->busybox", "bin/stty": "->busybox", "tmp": "dir",
		strings.TrimPrefix(loader, "/"): "file",
	} {
		h := files[name]
		got := "absent"
		switch {
		case h == nil:
		case h.Typeflag == tar.TypeSymlink:
			got = "->" + h.Linkname
		case h.Typeflag == tar.TypeReg:
			got = "file"
		case h.Typeflag == tar.TypeDir:
			got = "dir"
		}
		if got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

package containertest

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path"
	"slices"
	"strings"
	"time"
)

// busyboxes are where a static busybox is looked for, after
// BGJOB_TEST_BUSYBOX: where .ci/run unpacks Debian's busybox-static, and
// where installing that package puts it (it replaces Debian's busybox,
// whose sh the shell tests want).
var busyboxes = []string{"/var/cache/bgjob-ci/busybox-static/bin/busybox", "/bin/busybox"}

// StaticBusybox returns the path of a statically linked busybox: one
// that runs in a container with no C library, or in any root of its own.
func StaticBusybox() (string, error) {
	paths := busyboxes
	if p := os.Getenv("BGJOB_TEST_BUSYBOX"); p != "" {
		paths = []string{p}
	}
	for _, p := range paths {
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		static := !slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP })
		f.Close()
		if static {
			return p, nil
		}
	}
	return "", fmt.Errorf("needs a static busybox in %s: BGJOB_TEST_BUSYBOX, or Debian's busybox-static (apt-get download busybox-static; dpkg-deb -x, as .ci/run does)", strings.Join(paths, " or "))
}

// rootfs writes the tar of a root file system: each directory once,
// before what is in it.
type rootfs struct {
	buf  bytes.Buffer
	tw   *tar.Writer
	dirs map[string]bool
	now  time.Time
}

func newRootfs() *rootfs {
	r := &rootfs{dirs: map[string]bool{}, now: time.Now()}
	r.tw = tar.NewWriter(&r.buf)
	return r
}

// dir writes the directory name (no leading or trailing slash), and its
// parents first.
func (r *rootfs) dir(name string, mode int64, uid int) {
	if name == "." || r.dirs[name] {
		return
	}
	r.dir(path.Dir(name), 0o755, 0)
	r.dirs[name] = true
	r.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, Uid: uid, Gid: uid, ModTime: r.now})
}

func (r *rootfs) file(name string, mode int64, b []byte) {
	r.dir(path.Dir(name), 0o755, 0)
	r.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(b)), ModTime: r.now})
	r.tw.Write(b)
}

func (r *rootfs) link(name, target string) {
	r.dir(path.Dir(name), 0o755, 0)
	r.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777, ModTime: r.now})
}

// copy writes the host's file from (followed through links) as name.
func (r *rootfs) copy(name, from string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	r.file(name, 0o755, b)
	return nil
}

func (r *rootfs) bytes() ([]byte, error) {
	if err := r.tw.Close(); err != nil {
		return nil, err
	}
	return r.buf.Bytes(), nil
}

// busybox writes the static busybox, a link in /bin for each of its
// applets but those in except, /etc/passwd (root, user "bg" with uid
// 1000, nobody), /etc/group, the users' homes and a 1777 /tmp.
func (r *rootfs) busybox(except ...string) error {
	busybox, err := StaticBusybox()
	if err != nil {
		return err
	}
	list, err := exec.Command(busybox, "--list").Output()
	if err != nil {
		return fmt.Errorf("%s --list: %v", busybox, err)
	}
	r.dir("root", 0o700, 0)
	r.dir("home/bg", 0o755, 1000)
	r.dir("tmp", 0o1777, 0)
	if err := r.copy("bin/busybox", busybox); err != nil {
		return err
	}
	for _, a := range strings.Fields(string(list)) {
		// A link of busybox to itself would loop.
		if a != "busybox" && !slices.Contains(except, a) {
			r.link("bin/"+a, "busybox")
		}
	}
	r.file("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/sh\nbg:x:1000:1000:bg:/home/bg:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n"))
	r.file("etc/group", 0o644, []byte("root:x:0:\nbg:x:1000:\nnogroup:x:65534:\n"))
	return nil
}

// BusyboxRootfs returns the tar of a root file system holding the static
// busybox, a link for each of its applets, /etc/passwd (root, user "bg"
// with uid 1000, nobody) and a 1777 /tmp.
func BusyboxRootfs() ([]byte, error) {
	r := newRootfs()
	if err := r.busybox(); err != nil {
		return nil, err
	}
	return r.bytes()
}

// ptyTools are the host's programs PTYRootfs adds to busybox's, in /bin,
// where they take the place of busybox's applets of the same names: what
// run --pty needs (util-linux script), what --max-log-size needs
// (util-linux fallocate, with hole punching), flock for the logs' lock,
// bash, and dash as /bin/sh. Not busybox as /bin/sh: Debian builds
// busybox-static's ash to run its own applets before any program of the
// same name in PATH, so its fallocate, which cannot punch holes, would
// be the one the scripts run.
var ptyTools = []string{"dash", "bash", "script", "flock", "fallocate"}

// PTYRootfs returns the tar of BusyboxRootfs's root file system with the
// host's own script, flock, fallocate, bash and dash (as /bin/sh) in
// /bin, and the shared libraries they load (ldd's answer), the dynamic
// loader included, at their paths on the host.
func PTYRootfs() ([]byte, error) {
	r := newRootfs()
	if err := r.busybox(append([]string{"sh"}, ptyTools...)...); err != nil {
		return nil, err
	}
	libs := map[string]bool{}
	for _, tool := range ptyTools {
		p, err := exec.LookPath(tool)
		if err != nil {
			return nil, fmt.Errorf("needs %s on this machine: %v", tool, err)
		}
		if err := r.copy("bin/"+tool, p); err != nil {
			return nil, err
		}
		out, err := exec.Command("ldd", p).Output()
		if err != nil {
			return nil, fmt.Errorf("ldd %s: %v", p, err)
		}
		found, err := sharedLibs(string(out))
		if err != nil {
			return nil, fmt.Errorf("ldd %s: %v", p, err)
		}
		for _, lib := range found {
			if !libs[lib] {
				libs[lib] = true
				if err := r.copy(strings.TrimPrefix(lib, "/"), lib); err != nil {
					return nil, err
				}
			}
		}
	}
	r.link("bin/sh", "dash")
	return r.bytes()
}

// sharedLibs returns the files of the libraries in ldd's output: the
// paths after "=>" and the loader's, which ldd gives alone; not the
// vDSO, which the kernel provides. A library ldd did not find is an
// error.
func sharedLibs(ldd string) ([]string, error) {
	var libs []string
	for _, l := range strings.Split(ldd, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 3 && f[1] == "=>" && strings.HasPrefix(f[2], "/"):
			libs = append(libs, f[2])
		case len(f) >= 3 && f[1] == "=>" && f[2] == "not":
			return nil, fmt.Errorf("%s not found", f[0])
		case len(f) >= 1 && strings.HasPrefix(f[0], "/"):
			libs = append(libs, f[0])
		}
	}
	return libs, nil
}

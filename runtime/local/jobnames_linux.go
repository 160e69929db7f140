package local

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/bgjob/bgjob/jobdir"
)

// jobNames returns the names of the entries of the workspace ws that are
// job ids sorting before before (all with ""), and directories, not
// links, from one listing: the type of each entry is the one getdents
// gives (an lstat only where the file system gives none), with no
// os.DirEntry made for each of 10,000 entries. Not ok where ws cannot be
// read.
func jobNames(ws, before string) ([]string, bool) {
	fd, err := unix.Open(ws, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	buf := make([]byte, 32<<10)
	var names []string
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if n <= 0 {
			return names, true
		}
		// struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2),
		// d_type (1), d_name (NUL-terminated, padded).
		for off := 0; off+19 <= n; {
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen < 19 || off+reclen > n {
				return nil, false
			}
			typ, name := buf[off+18], buf[off+19:off+reclen]
			off += reclen
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if len(name) == 0 || name[0] < '0' || name[0] > '9' || typ != unix.DT_DIR && typ != unix.DT_UNKNOWN {
				continue
			}
			id := string(name)
			if !jobdir.IsID(id) || before != "" && id >= before {
				continue
			}
			if typ == unix.DT_UNKNOWN {
				if fi, err := os.Lstat(filepath.Join(ws, id)); err != nil || !fi.IsDir() {
					continue
				}
			}
			names = append(names, id)
		}
	}
}

// newestFirst returns an iterator over names from the greatest (the
// newest id) down: where only the first k are likely to be wanted (a page
// of k-1 and the one that tells of more), it finds the greatest k in one
// pass and sorts all of them only when asked for more (at 10,000 jobs a
// sort of every name took as long as the page's looks).
func newestFirst(names []string, k int) func() (string, bool) {
	var sel []string
	if k > 0 && k < len(names) {
		sel = make([]string, 0, k)
		for _, name := range names {
			if len(sel) < k {
				i, _ := slices.BinarySearch(sel, name)
				sel = slices.Insert(sel, i, name)
				continue
			}
			if name <= sel[0] {
				continue
			}
			// In place of the least: those below name move down one.
			i, _ := slices.BinarySearch(sel, name)
			copy(sel[:i-1], sel[1:i])
			sel[i-1] = name
		}
	} else {
		sel = names
		slices.Sort(sel)
		k = len(names)
	}
	i, sorted := len(sel)-1, k == len(names)
	return func() (string, bool) {
		if i < 0 && !sorted {
			// Past the greatest k: all of them, those after the k given.
			slices.Sort(names)
			sel, i, sorted = names, len(names)-1-k, true
		}
		if i < 0 {
			return "", false
		}
		i--
		return sel[i+1], true
	}
}

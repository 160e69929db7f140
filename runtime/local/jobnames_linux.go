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

// jobNames returns, sorted, the names of the entries of the workspace ws
// that are job ids sorting before before (all with ""), and directories,
// not links: all of them when k is 0, else the greatest k, and whether
// there were more. One listing, whose entries' types are those getdents
// gives (an lstat only where the file system gives none); at 10,000 jobs
// a page keeps k names, not a string and an os.DirEntry for each entry,
// and sorts none of the others. Not ok where ws cannot be read.
func jobNames(ws, before string, k int) (names []string, more, ok bool) {
	var buf [32 << 10]byte
	ok = eachEntry(ws, buf[:], func(name []byte, typ byte) {
		if typ != unix.DT_DIR && typ != unix.DT_UNKNOWN || !jobdir.IsID(string(name)) || before != "" && string(name) >= before {
			return
		}
		if typ == unix.DT_UNKNOWN {
			if fi, err := os.Lstat(filepath.Join(ws, string(name))); err != nil || !fi.IsDir() {
				return
			}
		}
		switch {
		case k == 0:
			names = append(names, string(name))
		case len(names) < k:
			i, _ := slices.BinarySearch(names, string(name))
			names = slices.Insert(names, i, string(name))
		case string(name) <= names[0]:
			more = true
		default:
			// In place of the least: those below name move down one.
			more = true
			i, _ := slices.BinarySearch(names, string(name))
			copy(names[:i-1], names[1:i])
			names[i-1] = string(name)
		}
	})
	if !ok {
		return nil, false, false
	}
	if k == 0 {
		slices.Sort(names)
	}
	return names, more, true
}

// eachEntry hands f the name and type (DT_*) of each entry of the
// directory dir, from getdents into buf; not ok where dir cannot be read.
func eachEntry(dir string, buf []byte, f func(name []byte, typ byte)) bool {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false
		}
		if n <= 0 {
			return true
		}
		// struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2),
		// d_type (1), d_name (NUL-terminated, padded).
		for off := 0; off+19 <= n; {
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen < 19 || off+reclen > n {
				return false
			}
			typ, name := buf[off+18], buf[off+19:off+reclen]
			off += reclen
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			f(name, typ)
		}
	}
}

// newestFirst returns an iterator over the jobs of ws before before, from
// the newest down, of which the first k are likely to be wanted (a page
// of k-1 and the one that tells of more; all with k 0): past them, it
// lists the workspace again for those before the last given. The
// iterator says false at the end, and not ok where ws could not be read.
func newestFirst(ws, before string, k int) func() (id string, more, ok bool) {
	names, rest, ok := jobNames(ws, before, k)
	i := len(names) - 1
	return func() (string, bool, bool) {
		if !ok {
			return "", false, false
		}
		if i < 0 && rest && len(names) > 0 {
			names, rest, ok = jobNames(ws, names[0], 0)
			if !ok {
				return "", false, false
			}
			i = len(names) - 1
		}
		if i < 0 {
			return "", false, true
		}
		i--
		return names[i+1], true, true
	}
}

// entriesOf returns which of files are entries of the directory dir, bit
// i for files[i] (at most 32 of them), from one listing (getdents): the
// files of a job, named as bgjob names them, without a stat for each.
// Not ok where dir cannot be read.
func entriesOf(dir string, files []struct{ file, tag string }) (uint32, bool) {
	var buf [4096]byte
	var there uint32
	ok := eachEntry(dir, buf[:], func(name []byte, _ byte) {
		for i, f := range files {
			if f.file == string(name) {
				there |= 1 << i
				return
			}
		}
	})
	return there, ok
}

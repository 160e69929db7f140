package local

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
)

// listenPort is a TCP port a process listens on, as bg_ports prints it.
type listenPort struct {
	port    int
	address string
}

// portRecords is bg_ports made in Go: the p records of the TCP ports the
// processes pids listen on, each port and address once, by port then
// address (bytewise, as sort does in the C locale): the sockets among
// their descriptors (/proc/PID/fd, "socket:[INODE]") against the LISTEN
// rows of /proc/net/tcp and tcp6, which the kernel's sock_diag gives
// faster (listeningSockets); no table is read for processes without a
// socket. A process gone, or a descriptor closed, meanwhile is passed
// over, as ls -l passes it over; not ok where /proc/net/tcp is missing
// (the script then asks ss or lsof).
func portRecords(pids []int) (string, bool) {
	if len(pids) == 0 {
		return "", true
	}
	inodes := map[string]bool{}
	for _, pid := range pids {
		fd := "/proc/" + strconv.Itoa(pid) + "/fd"
		ents, err := os.ReadDir(fd)
		if err != nil {
			continue
		}
		for _, e := range ents {
			link, err := os.Readlink(fd + "/" + e.Name())
			if err != nil {
				continue
			}
			if in, ok := strings.CutPrefix(link, "socket:["); ok && strings.HasSuffix(in, "]") {
				inodes[strings.TrimSuffix(in, "]")] = true
			}
		}
	}
	var ports []listenPort
	if len(inodes) > 0 {
		// The kernel's listening sockets, asked as ss asks them; where
		// netlink refuses, read as the script reads them.
		if ls, ok := listeningSockets(); ok {
			for in := range inodes {
				if p, ok := ls[in]; ok {
					ports = append(ports, p)
				}
			}
		} else {
			tcp, err := os.ReadFile("/proc/net/tcp")
			if err != nil {
				return "", false
			}
			// A host without IPv6 has no tcp6 (awk passes over a file it
			// cannot read).
			tcp6, _ := os.ReadFile("/proc/net/tcp6")
			for _, table := range [][]byte{tcp, tcp6} {
				ports = appendListening(ports, table, inodes)
			}
		}
	} else if _, err := os.Stat("/proc/net/tcp"); err != nil {
		// The script, which would find no socket either, still needs
		// /proc/net/tcp to look (else it asks ss or lsof).
		return "", false
	}
	slices.SortFunc(ports, func(a, b listenPort) int {
		return cmp.Or(cmp.Compare(a.port, b.port), strings.Compare(a.address, b.address))
	})
	ports = slices.Compact(ports)
	var b strings.Builder
	for _, p := range ports {
		b.WriteString("p\t" + strconv.Itoa(p.port) + "\ttcp\t" + p.address + "\n")
	}
	return b.String(), true
}

// appendListening appends to ports those of the rows of table (the text
// of /proc/net/tcp or tcp6) in state LISTEN (0A) whose socket's inode
// (field 10) is among inodes.
func appendListening(ports []listenPort, table []byte, inodes map[string]bool) []listenPort {
	lines := bytes.Split(table, []byte("\n"))
	for i, line := range lines {
		f := strings.Fields(string(line))
		if i == 0 || len(f) < 10 || f[3] != "0A" || !inodes[f[9]] {
			continue
		}
		addr, port, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(port, 16, 16)
		a, ok := procAddress(addr)
		if err != nil || !ok {
			continue
		}
		ports = append(ports, listenPort{int(n), a})
	}
	return ports
}

// procAddress is an address of /proc/net/tcp (8 hex digits) or tcp6
// (32), each 32-bit word in the host's (little-endian) order, as net.IP
// prints it: dotted, or RFC 5952's IPv6 ("::", "::1"; an IPv4-mapped one
// dotted).
func procAddress(h string) (string, bool) {
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != 4 && len(b) != 16 {
		return "", false
	}
	for w := 0; w < len(b); w += 4 {
		b[w], b[w+1], b[w+2], b[w+3] = b[w+3], b[w+2], b[w+1], b[w]
	}
	return net.IP(b).String(), true
}

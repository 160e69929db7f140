package local

import (
	"encoding/binary"
	"net"
	"strconv"
	"syscall"
)

// The kernel's sock_diag interface (linux/sock_diag.h, inet_diag.h).
const (
	netlinkInetDiag    = 4  // NETLINK_INET_DIAG (NETLINK_SOCK_DIAG)
	sockDiagByFamily   = 20 // SOCK_DIAG_BY_FAMILY
	tcpListen          = 10 // TCP_LISTEN
	inetDiagReqV2Len   = 56 // struct inet_diag_req_v2
	inetDiagMsgMinLen  = 72 // struct inet_diag_msg
	inetDiagMsgInodeAt = 68
)

// listeningSockets returns the TCP sockets in state LISTEN on the host
// (this network namespace), by inode, asked of the kernel through
// sock_diag netlink, as ss asks: the kernel walks its table of listening
// sockets only, where a read of /proc/net/tcp walks every socket's, which
// costs milliseconds on a host with many (docs/benchmarks.md). Not ok
// where netlink refuses: the caller reads /proc/net/tcp.
func listeningSockets() (map[string]listenPort, bool) {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, netlinkInetDiag)
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return nil, false
	}
	found := map[string]listenPort{}
	for seq, family := range []uint8{syscall.AF_INET, syscall.AF_INET6} {
		if !diagDump(fd, uint32(seq+1), family, found) {
			return nil, false
		}
	}
	return found, true
}

// diagDump asks for the listening TCP sockets of family and adds them to
// found; not ok on an error of the kernel's or a malformed answer.
func diagDump(fd int, seq uint32, family uint8, found map[string]listenPort) bool {
	req := make([]byte, syscall.NLMSG_HDRLEN+inetDiagReqV2Len)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], sockDiagByFamily)
	ne.PutUint16(req[6:], syscall.NLM_F_REQUEST|syscall.NLM_F_DUMP)
	ne.PutUint32(req[8:], seq)
	r := req[syscall.NLMSG_HDRLEN:]
	r[0], r[1] = family, syscall.IPPROTO_TCP
	ne.PutUint32(r[4:], 1<<tcpListen)
	if err := syscall.Sendto(fd, req, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return false
	}
	buf := make([]byte, 32<<10)
	for {
		n, _, err := syscall.Recvfrom(fd, buf, 0)
		if err != nil {
			return false
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return false
		}
		for _, m := range msgs {
			if m.Header.Seq != seq {
				continue
			}
			switch m.Header.Type {
			case syscall.NLMSG_DONE:
				return true
			case syscall.NLMSG_ERROR:
				return false
			}
			d := m.Data
			if len(d) < inetDiagMsgMinLen || d[1] != tcpListen {
				continue
			}
			port := int(binary.BigEndian.Uint16(d[4:6]))
			var ip net.IP
			if d[0] == syscall.AF_INET {
				ip = net.IP(append([]byte(nil), d[8:12]...))
			} else {
				ip = net.IP(append([]byte(nil), d[8:24]...))
			}
			inode := strconv.FormatUint(uint64(ne.Uint32(d[inetDiagMsgInodeAt:])), 10)
			found[inode] = listenPort{port, ip.String()}
		}
	}
}

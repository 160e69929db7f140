// Package near reaches the hosts that need no transport of bgjob's own:
// this machine, and any host reached by running a command (--via,
// runtime/via). It is the part of package host that the bgjob binary
// serving local verbs links; host adds the SSH and container transports,
// whose packages that binary leaves out.
package near

import (
	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/runtime/local"
	"github.com/bgjob/bgjob/runtime/via"
)

// IsLocal reports whether host names this machine.
func IsLocal(host string) bool { return host == "" }

// Dial returns a runtime of host and what releases it when host is this
// machine or the command viaCmd ("" for none: via.New's) reaches it; ok
// is false for a host that only another transport reaches (SSH, a
// container's daemon). Errors are via.New's, which name the host.
func Dial(host, viaCmd string) (rt bgjob.Runtime, release func(), ok bool, err error) {
	switch {
	case IsLocal(host):
		return local.New(), func() {}, true, nil
	case viaCmd != "":
		r, err := via.New(viaCmd, host)
		if err != nil {
			return nil, nil, true, err
		}
		return r, func() { r.Close() }, true, nil
	}
	return nil, nil, false, nil
}

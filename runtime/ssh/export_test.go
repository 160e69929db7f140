package ssh

import "time"

// UsedControlMaster reports whether r's connection runs over an OpenSSH
// ControlMaster socket.
func UsedControlMaster(r *Runtime) bool { return r.dialer.control }

// ForceFallback makes Dial read ssh_config without the ssh binary.
func ForceFallback(o *Options) { o.sshBinary = "-" }

// SetStartPatience sets how long r waits for a script of bgjob's to begin.
func SetStartPatience(r *Runtime, d time.Duration) { r.startPatience = d }

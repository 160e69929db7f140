package ssh

// UsedControlMaster reports whether r's connection runs over an OpenSSH
// ControlMaster socket.
func UsedControlMaster(r *Runtime) bool { return r.dialer.control }

// ForceFallback makes Dial read ssh_config without the ssh binary.
func ForceFallback(o *Options) { o.sshBinary = "-" }

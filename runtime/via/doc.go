// Package via runs bgjob's shell scripts on a host reached by running a
// command on this machine: "kubectl exec -i %h --", "podman exec -i %h",
// "ssh -F cfg %h", anything that runs a shell on the host with its stdin,
// stdout and stderr passed through, as pdsh's exec module does. %h in the
// command is the host's name; with no %h the name goes last.
//
// Each script is one run of the command followed by "sh -s": the host's
// shell reads a short bootstrap on stdin, reports its pid on stderr, then
// reads the script's exact length on stdin (shellgen.Bootstrap) and runs
// it, and the rest of stdin is the script's own. Sending everything on
// stdin, and the script only once the shell has answered (the shell may
// read ahead whatever its stdin holds), makes one form work whether the
// command passes its arguments on as they are (kubectl exec, podman exec)
// or joins them into one line for a remote shell to parse again (ssh):
// "sh -s" reads the same either way. It costs one round trip to the host
// per script.
//
// The command runs in a session of its own, without a controlling
// terminal: it cannot ask for a password, and ends with its process group.
// A cancelled script is ended on the host by a second run of the command
// that kills the script's process group (runtime/shexec): a client killed
// here does not end what it started there.
//
// The package imports nothing internal to bgjob: a runtime of one's own
// can be written the same way.
package via

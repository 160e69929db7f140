// Package shellgen generates the POSIX shell scripts that do everything bgjob
// does on a host: launch a job's wrapper, observe job directories, stop,
// wait, read logs and remove jobs. It is pure: specs in, script text out, no
// I/O. The same scripts run through every runtime (runtime/local,
// runtime/ssh, runtime/container), which is what keeps them identical.
//
// Every script runs under bash, dash and busybox sh. It writes its results
// between two marker lines, BeginMarker and EndMarker, so that whatever a
// remote login shell prints first is ignored. What it prints between them
// is a vocabulary of records internal to bgjob.
//
// A runtime needs little of this package, all of it public: a script is one
// argument to `sh -c`; one longer than MaxArgScript goes through Bootstrap
// (`sh -c BOOTSTRAP sh N`, the script's N bytes first on stdin); Quote and
// QuoteArgv quote words for a command line that a remote side joins, as
// ssh does; a runtime may watch for BeginMarker to know that the host's
// shell has started the script. A bgjob.Runtime written outside this
// module needs nothing else (see the package bgjob example
// ExampleRuntime).
package shellgen

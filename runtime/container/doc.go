// Package container runs bgjob's shell scripts inside a running container:
// "docker://[USER@]CONTAINER" through the Docker Engine API and
// "podman://[USER@]CONTAINER" through Podman's Docker-compatible API, with
// one small client of that API for both (engine.go; docs/design/containers.md
// says why it is not github.com/moby/moby/client).
//
// Each script is one exec of "sh -c SCRIPT" in the container, attached over
// a hijacked stream whose stdout and stderr are demultiplexed (stdcopy);
// its exit status comes from exec inspect. Nothing is installed in the
// container: its own /bin/sh runs the scripts, busybox ash included, and
// the jobs' files live in the container's file system (/tmp/bgjob-UID there
// by default, as the scripts pick it on any host).
//
// The Engine API cannot kill an exec. A script therefore reports its pid
// (on stderr, before anything else) and a cancelled Exec ends it with a
// second exec that kills that process group; every exec leads a process
// group of its own, as an SSH session does.
package container

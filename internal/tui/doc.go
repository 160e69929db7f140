// Package tui holds bgjob's two verbs that take over the terminal: top, a
// live table of the jobs drawn with tcell, and attach, which follows a
// job's output to the terminal and sends it what is typed. Each is one
// call on a bgjob.Client (Top, Attach); the command line checks its
// flags, connects, and says how an attach ended.
package tui

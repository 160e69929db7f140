//go:build ssh

package main

// Linked, not used: its package inits run, as in any bgjob that reaches
// hosts over SSH.
import _ "github.com/bgjob/bgjob/runtime/ssh"

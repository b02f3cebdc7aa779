// Package errs wraps errors so that a message names one package, once, at
// its start: "simpledb: open live: lock live/LOCK held by another process
// or Open", not "simpledb: open live: vfs: lock live/LOCK held ...".
//
// Every package of the module names itself in the errors it makes, so an
// error returned straight to a caller says where it came from. A package
// that wraps another's error does so through Errorf, which takes the inner
// name off the inner message: the outermost package names itself, and the
// chain under it still answers errors.Is and errors.As in full.
package errs

import (
	"fmt"
	"strings"
)

// Names are the names the module's packages put before their messages.
// "strata" names the module itself, for errors shared across its packages.
var Names = []string{
	"strata", "simpledb", "sstables", "recordio", "memstore", "vfs",
	"errorfs", "inspect", "bloom", "logformat", "offheap", "raftstore", "kv",
}

// Errorf is fmt.Errorf, each %w operand's message entering without the
// package name it starts with, unless the format starts with that operand:
// then its name starts the message. The result wraps the operands as
// fmt.Errorf's would.
func Errorf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	var trimmed []any
	for i, a := range args {
		e, ok := a.(error)
		if !ok || e == nil || i == 0 && strings.HasPrefix(format, "%w") {
			continue
		}
		msg, ok := Unnamed(e.Error())
		if !ok {
			continue
		}
		if trimmed == nil {
			trimmed = append([]any(nil), args...)
		}
		trimmed[i] = msg
	}
	if trimmed == nil {
		return err
	}
	msg := fmt.Sprintf(strings.ReplaceAll(format, "%w", "%s"), trimmed...)
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return &wrapped{msg, u.Unwrap()}
	case interface{ Unwrap() []error }:
		return &wrappedAll{msg, u.Unwrap()}
	}
	return err
}

// Unnamed returns msg without the package name it starts with, and
// whether it started with one.
func Unnamed(msg string) (string, bool) {
	for _, name := range Names {
		if len(msg) > len(name)+2 && msg[len(name)] == ':' && msg[len(name)+1] == ' ' && msg[:len(name)] == name {
			return msg[len(name)+2:], true
		}
	}
	return msg, false
}

// wrapped is the result of a format with one %w, wrapped the same way.
type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

// wrappedAll is the result of a format with more than one %w.
type wrappedAll struct {
	msg  string
	errs []error
}

func (w *wrappedAll) Error() string   { return w.msg }
func (w *wrappedAll) Unwrap() []error { return w.errs }

package kv

import (
	"encoding/binary"
	"fmt"

	"github.com/stratadb/strata/internal/errs"
)

// Op is what a command does.
type Op byte

const (
	// OpPut sets a key to a value.
	OpPut Op = 1
	// OpDelete deletes a key.
	OpDelete Op = 2
	// OpNoop changes nothing. A leader applies one at the start of its term
	// before it serves linearizable reads (see Node.Get).
	OpNoop Op = 3
)

// commandFormat is the version byte that starts every command.
const commandFormat = 1

// Command is one change to the replicated map: the Data of a raft log entry.
//
//	+--------+--------+------------+-----+------------+
//	| format | op     | key length | key | value      |
//	| 1 byte | 1 byte | uvarint    |     | (the rest) |
//	+--------+--------+------------+-----+------------+
//
// format is 1. A delete's and a noop's value is empty, a noop's key too.
type Command struct {
	Op    Op
	Key   []byte
	Value []byte
}

// Encode returns the command's encoding.
func (c Command) Encode() []byte {
	b := make([]byte, 0, 2+binary.MaxVarintLen64+len(c.Key)+len(c.Value))
	b = append(b, commandFormat, byte(c.Op))
	b = binary.AppendUvarint(b, uint64(len(c.Key)))
	b = append(b, c.Key...)
	return append(b, c.Value...)
}

// DecodeCommand decodes a command; Key and Value alias data. A command that
// does not decode, or that a put or delete without a key, is
// ErrBadCommand.
func DecodeCommand(data []byte) (Command, error) {
	bad := func(why string) (Command, error) {
		return Command{}, errs.Errorf("kv: command: %s: %w", why, ErrBadCommand)
	}
	if len(data) < 2 {
		return bad("shorter than its header")
	}
	if data[0] != commandFormat {
		return bad(fmt.Sprintf("unknown format %d", data[0]))
	}
	c := Command{Op: Op(data[1])}
	n, w := binary.Uvarint(data[2:])
	if w <= 0 || n > uint64(len(data)-2-w) {
		return bad("key length past the end")
	}
	rest := data[2+w:]
	c.Key, c.Value = rest[:n:n], rest[n:]
	switch c.Op {
	case OpPut, OpDelete:
		if len(c.Key) == 0 {
			return bad("empty key")
		}
	case OpNoop:
	default:
		return bad(fmt.Sprintf("unknown op %d", c.Op))
	}
	return c, nil
}

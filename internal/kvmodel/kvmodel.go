// Package kvmodel is the porcupine model the linearizability tests check
// histories against: a key-value store whose every key is a register,
// absent or holding a value, read, written and deleted on its own. The
// model partitions a history by key, so each key is checked apart, which
// keeps long histories cheap.
package kvmodel

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// The operations.
const (
	Get    = 'g'
	Put    = 'p'
	Delete = 'd'
)

// Input is an operation: Get, Put or Delete of Key (Put: with Value).
type Input struct {
	Op         byte
	Key, Value string
}

// Output is what an operation returned: a Get's value and whether the key
// had one. Unknown marks a write whose outcome its client never learned;
// such an operation returns at the end of time, since it may take effect
// whenever after its call.
type Output struct {
	Value   string
	Found   bool
	Unknown bool
}

type state struct {
	value string
	found bool
}

// Model checks histories of Input and Output operations.
var Model = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		for _, op := range history {
			k := op.Input.(Input).Key
			byKey[k] = append(byKey[k], op)
		}
		var out [][]porcupine.Operation
		for _, ops := range byKey {
			out = append(out, ops)
		}
		return out
	},
	Init: func() any { return state{} },
	Step: func(st, input, output any) (bool, any) {
		s, in, out := st.(state), input.(Input), output.(Output)
		switch in.Op {
		case Get:
			return out.Found == s.found && out.Value == s.value, s
		case Put:
			return true, state{value: in.Value, found: true}
		default:
			return true, state{}
		}
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(Input), output.(Output)
		switch in.Op {
		case Get:
			return fmt.Sprintf("get(%s) -> %q, %v", in.Key, out.Value, out.Found)
		case Put:
			return fmt.Sprintf("put(%s, %.40s) unknown=%v", in.Key, in.Value, out.Unknown)
		default:
			return fmt.Sprintf("delete(%s) unknown=%v", in.Key, out.Unknown)
		}
	},
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/stratadb/strata/inspect"
	"github.com/stratadb/strata/simpledb"
)

// hexUsage describes --hex, which every command takes.
const hexUsage = "print keys and values in hex, and read KEY, VALUE, --lower, --upper and --prefix in hex"

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // damage found, a key not found, an operation failed
	exitUsage   = 2 // bad arguments, or a path that is not what the command reads
)

// command is one of strata's commands.
type command struct {
	name    string // "db scan"
	args    string // "DIR", for the usage line
	nargs   int    // positional arguments it takes
	summary string
	help    string // what it does, with an example
	flags   func(fs *flag.FlagSet, c *cli)
	run     func(c *cli, args []string) error
}

// cli is one invocation: its flags, its output, its error stream.
type cli struct {
	out     *printer
	stderr  io.Writer
	cmdName string

	// Flags; each command registers those it reads.
	lower, upper, prefix string
	reverse              bool
	limit                int
	count                bool
	entries              bool
	resync               bool
	create               bool
	logFormat            uint64
	merger               string
	watch                time.Duration
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run runs strata with args and returns its exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		return help(args[1:], stdout, stderr)
	}
	cmd, rest := findCommand(args)
	if cmd == nil {
		fmt.Fprintf(stderr, "strata: unknown command %q; run 'strata help' for the list\n", strings.Join(args[:min(2, len(args))], " "))
		return exitUsage
	}
	c := &cli{stderr: stderr, cmdName: cmd.name}
	fs := flag.NewFlagSet("strata "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	jsonOut := fs.Bool("json", false, "print one JSON object per line")
	hexKeys := fs.Bool("hex", false, hexUsage)
	values := fs.String("value-format", "", valueFormatUsage)
	if cmd.flags != nil {
		cmd.flags(fs, c)
	}
	positional, err := parseInterleaved(fs, rest)
	if err == nil && len(positional) != cmd.nargs {
		err = fmt.Errorf("takes %d argument(s) (%s), got %d", cmd.nargs, cmd.args, len(positional))
	}
	var format valueFormat
	if err == nil {
		format, err = parseValueFormat(*values)
	}
	if err != nil {
		fmt.Fprintf(stderr, "strata %s: %v\nusage: strata %s %s\nrun 'strata help %s' for more\n", cmd.name, err, cmd.name, cmd.args, cmd.name)
		return exitUsage
	}
	c.out = newPrinter(stdout, *jsonOut, *hexKeys, format)
	err = cmd.run(c, positional)
	if ferr := c.out.flush(); err == nil {
		err = ferr
	}
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "strata %s: %v\n", cmd.name, err)
	return exitStatus(err)
}

// exitStatus maps an error to the exit status: 2 for arguments that name
// the wrong kind of thing, 1 for everything else.
func exitStatus(err error) int {
	var u usageError
	switch {
	case errors.Is(err, simpledb.ErrCorruption):
		return exitFailure // damage inside a database, whatever else it wraps
	case errors.As(err, &u), errors.Is(err, simpledb.ErrNotDB), errors.Is(err, inspect.ErrUnknownLogFormat),
		errors.Is(err, simpledb.ErrEmptyKey), errors.Is(err, simpledb.ErrKeyTooLarge), errors.Is(err, simpledb.ErrValueTooLarge):
		return exitUsage
	}
	return exitFailure
}

// usageError is a bad argument.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// errDamaged ends a verify that found damage, after the damage is printed.
var errDamaged = errors.New("damage found")

// parseInterleaved parses flags that may come before, between or after
// the positional arguments, and returns the positional ones. "--" ends
// the flags.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if parsed := len(args) - len(rest); parsed > 0 && args[parsed-1] == "--" {
			return append(positional, rest...), nil // flag consumed the "--"
		}
		if len(rest) == 0 {
			return positional, nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

func findCommand(args []string) (*command, []string) {
	for i := range commands {
		words := strings.Fields(commands[i].name)
		if len(args) >= len(words) && slices.Equal(args[:len(words)], words) {
			return &commands[i], args[len(words):]
		}
	}
	return nil, nil
}

func usage(w io.Writer) {
	fmt.Fprint(w, `strata inspects, verifies, scans and edits Strata databases, tables, blob files and recordio files.

usage: strata COMMAND [ARGUMENTS] [--json] [--hex] [--value-format FORMAT]

commands:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-40s %s\n", c.name+" "+c.args, c.summary)
	}
	fmt.Fprint(w, `
Keys and values print as text when they are plain text, else as Go
double-quoted strings ("\x18\x86"); KEY, VALUE, --lower, --upper and
--prefix are read in that form, so what strata prints is what to pass
back ('strata help db get' for the details). Every command takes --json
(one object per line, for scripts), --hex (keys and values in hex) and
--value-format (values alone: text, hex, uint64le or uint64be, the last
two 8-byte numbers such as Uint64AddMerger's counters and sequences).
Exit status: 0 success, 1 damage found, key not found or failure, 2 usage
error. 'strata help COMMAND' describes one.
`)
}

func help(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stdout)
		return exitOK
	}
	cmd, rest := findCommand(args)
	if cmd == nil && len(args) == 1 {
		// A group: strata help db lists the db commands.
		var group []command
		for _, c := range commands {
			if strings.HasPrefix(c.name, args[0]+" ") {
				group = append(group, c)
			}
		}
		if len(group) > 0 {
			for _, c := range group {
				fmt.Fprintf(stdout, "  %-40s %s\n", c.name+" "+c.args, c.summary)
			}
			return exitOK
		}
	}
	if cmd == nil || len(rest) > 0 {
		fmt.Fprintf(stderr, "strata help: unknown command %q\n", strings.Join(args, " "))
		return exitUsage
	}
	fmt.Fprintf(stdout, "usage: strata %s %s\n\n%s\n", cmd.name, cmd.args, strings.TrimSpace(cmd.help))
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.Bool("json", false, "print one JSON object per line")
	fs.Bool("hex", false, hexUsage)
	fs.String("value-format", "", valueFormatUsage)
	if cmd.flags != nil {
		cmd.flags(fs, &cli{})
	}
	fmt.Fprintln(stdout, "\nflags:")
	fs.SetOutput(stdout)
	fs.PrintDefaults()
	return exitOK
}

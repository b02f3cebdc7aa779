package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// printer writes a command's output: aligned columns for people, or one
// JSON object per line for scripts.
type printer struct {
	w       *bufio.Writer
	tw      *tabwriter.Writer // the current table, if any
	rows    int               // rows in tw since its last flush
	json    bool
	hexKeys bool
	values  valueFormat
}

// tableBlock is the rows a table aligns at most: a tabwriter holds every
// row until it is flushed, and a scan may print millions.
const tableBlock = 256

func newPrinter(w io.Writer, jsonOut, hexKeys bool, values valueFormat) *printer {
	return &printer{w: bufio.NewWriter(w), json: jsonOut, hexKeys: hexKeys, values: values}
}

// object prints one JSON object (for --json).
func (p *printer) object(v map[string]any) {
	p.endTable()
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of plain values are printed
	}
	p.w.Write(b)
	p.w.WriteByte('\n')
}

// line prints a line of text.
func (p *printer) line(format string, args ...any) {
	p.endTable()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// row prints a row of an aligned table; a table ends at the next line,
// object or flush.
func (p *printer) row(cells ...string) {
	if p.tw == nil {
		p.tw = tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	}
	fmt.Fprintln(p.tw, strings.Join(cells, "\t"))
	if p.rows++; p.rows == tableBlock {
		p.tw.Flush()
		p.rows = 0
	}
}

func (p *printer) endTable() {
	if p.tw != nil {
		p.tw.Flush()
		p.tw, p.rows = nil, 0
	}
}

func (p *printer) flush() error {
	p.endTable()
	return p.w.Flush()
}

// key formats a key or value for people in the key syntax (keys.go), or
// with --hex as hex with a 0x prefix.
func (p *printer) key(b []byte) string {
	if p.hexKeys {
		return "0x" + hex.EncodeToString(b)
	}
	return formatKey(b)
}

// keyField adds a key or value to a JSON object: under name when it is
// printable text that does not begin with a double quote, so that the
// string read back names it as an argument; else under name_hex, in hex,
// which --hex reads.
func (p *printer) keyField(obj map[string]any, name string, b []byte) {
	textField(obj, name, b, p.hexKeys)
}

// textField is keyField, with --hex as asHex says.
func textField(obj map[string]any, name string, b []byte, asHex bool) {
	if !asHex && printable(b) && !bytes.HasPrefix(b, []byte(`"`)) {
		obj[name] = string(b)
	} else {
		obj[name+"_hex"] = hex.EncodeToString(b)
	}
}

// pair prints a key and its value as one JSON object.
func (p *printer) pair(k, v []byte) {
	obj := map[string]any{}
	p.keyField(obj, "key", k)
	p.valueField(obj, "value", v)
	p.object(obj)
}

// arg reads a KEY or VALUE argument or a key flag (what names it): in the
// key syntax (keys.go), or with --hex as hex, 0x prefix optional.
func (c *cli) arg(s, what string) ([]byte, error) { return readArg(s, what, c.out.hexKeys) }

// readArg is arg, with --hex as asHex says.
func readArg(s, what string, asHex bool) ([]byte, error) {
	if asHex {
		b, err := hex.DecodeString(strings.TrimPrefix(s, "0x"))
		if err != nil {
			return nil, usagef("%s %q is not hex: %v", what, s, err)
		}
		return b, nil
	}
	b, err := parseKey(s)
	if err != nil {
		return nil, usagef("%s %s begins with a double quote but is not a Go double-quoted string (as strata prints keys that are not plain text); the text %s itself is %s",
			what, s, s, strconv.Quote(s))
	}
	return b, nil
}

package main

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// valueFormat is how values print, and VALUE arguments read
// (--value-format): apart from keys, so that a counter prints as a number
// while its key stays text.
type valueFormat string

const (
	valuesAsKeys  valueFormat = ""         // as keys print: the key syntax, or hex with --hex
	valuesText    valueFormat = "text"     // the key syntax, whatever --hex says of keys
	valuesHex     valueFormat = "hex"      // hex, 0x prefix
	valuesUint64L valueFormat = "uint64le" // 8 bytes little-endian as a number (Uint64AddMerger's counters)
	valuesUint64B valueFormat = "uint64be" // 8 bytes big-endian as a number (sequences)
)

// valueFormats are the formats --value-format takes, for its usage.
var valueFormats = []valueFormat{valuesText, valuesHex, valuesUint64L, valuesUint64B}

// valueFormatUsage describes --value-format, which every command takes.
const valueFormatUsage = "print values, and read VALUE, as text, hex, uint64le or uint64be (8-byte numbers); default: as keys"

// parseValueFormat reads --value-format.
func parseValueFormat(s string) (valueFormat, error) {
	for _, f := range valueFormats {
		if s == string(f) {
			return f, nil
		}
	}
	if s == "" {
		return valuesAsKeys, nil
	}
	return "", usagef("--value-format %q: want text, hex, uint64le or uint64be", s)
}

// uint64Of returns b as a number in a uint64 format, and false for b of
// another length, or another format.
func (f valueFormat) uint64Of(b []byte) (uint64, bool) {
	switch {
	case len(b) != 8:
		return 0, false
	case f == valuesUint64L:
		return binary.LittleEndian.Uint64(b), true
	case f == valuesUint64B:
		return binary.BigEndian.Uint64(b), true
	}
	return 0, false
}

// value formats a value for people as --value-format says. A value that
// is not 8 bytes, in a uint64 format, prints in the key syntax after its
// length.
func (p *printer) value(b []byte) string {
	if parts := operands(b); len(parts) > 1 {
		s := make([]string, len(parts))
		for i, part := range parts {
			s[i] = p.value(part)
		}
		return "operands(" + strings.Join(s, ", ") + ")"
	}
	switch p.values {
	case valuesText:
		return formatKey(b)
	case valuesHex:
		return "0x" + hex.EncodeToString(b)
	case valuesUint64L, valuesUint64B:
		if n, ok := p.values.uint64Of(b); ok {
			return strconv.FormatUint(n, 10)
		}
		return fmt.Sprintf("(%d bytes, not a uint64) %s", len(b), formatKey(b))
	}
	return p.key(b)
}

// valueField adds a value to a JSON object as --value-format says: a
// number in a uint64 format, under name_hex in hex, or as keyField adds a
// key (text ignoring --hex).
func (p *printer) valueField(obj map[string]any, name string, b []byte) {
	if parts := operands(b); len(parts) > 1 {
		list := make([]map[string]any, len(parts))
		for i, part := range parts {
			list[i] = map[string]any{}
			p.valueField(list[i], "value", part)
		}
		obj[name+"_operands"] = list
		return
	}
	switch p.values {
	case valuesText:
		textField(obj, name, b, false)
		return
	case valuesHex:
		obj[name+"_hex"] = hex.EncodeToString(b)
		return
	case valuesUint64L, valuesUint64B:
		if n, ok := p.values.uint64Of(b); ok {
			obj[name] = n
		} else {
			obj[name+"_hex"] = hex.EncodeToString(b)
		}
		return
	}
	p.keyField(obj, name, b)
}

// valueArg reads a VALUE argument as --value-format says.
func (c *cli) valueArg(s string) ([]byte, error) {
	switch f := c.out.values; f {
	case valuesText, valuesHex:
		return readArg(s, "VALUE", f == valuesHex)
	case valuesUint64L, valuesUint64B:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, usagef("VALUE %q is not a uint64: %v", s, err)
		}
		if f == valuesUint64L {
			return binary.LittleEndian.AppendUint64(nil, n), nil
		}
		return binary.BigEndian.AppendUint64(nil, n), nil
	}
	return c.arg(s, "VALUE")
}

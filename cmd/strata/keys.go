package main

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The key syntax: how strata prints a key or value for people, and how it
// reads KEY and VALUE arguments and --lower, --upper and --prefix, each
// the inverse of the other. A key prints as itself when it is plain text
// (see plainText), else as a Go double-quoted string: "\x18\x86", "a\nb",
// "\"quoted\"". An argument that begins with a double quote is read as
// such a string; any other argument is the text itself, so that 0x1886 is
// six bytes of text. The first byte decides, and a key that begins with a
// double quote always prints quoted, so each key has one printed form and
// each printed form one key.

// formatKey returns b in the key syntax.
func formatKey(b []byte) string {
	if plainText(b) {
		return string(b)
	}
	return strconv.Quote(string(b))
}

// plainText reports whether b prints as itself: non-empty printable
// UTF-8 that does not begin with a double quote, nor begin or end with a
// space, nor hold two spaces in a row, which would blur the columns of a
// table (two spaces or more separate them).
func plainText(b []byte) bool {
	s := string(b)
	if s == "" || s[0] == '"' || s[0] == ' ' || s[len(s)-1] == ' ' || strings.Contains(s, "  ") {
		return false
	}
	return printable(b)
}

// printable reports whether b is valid UTF-8 of printable characters
// (unicode.IsPrint: letters, marks, numbers, punctuation, symbols and
// the ASCII space).
func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// parseKey reads s in the key syntax. A string that begins with a double
// quote but is not a Go double-quoted string is an error, not text: the
// text it might mean prints quoted, as "\"abc" for "abc.
func parseKey(s string) ([]byte, error) {
	if !strings.HasPrefix(s, `"`) {
		return []byte(s), nil
	}
	u, err := strconv.Unquote(s)
	if err != nil {
		return nil, err
	}
	return []byte(u), nil
}

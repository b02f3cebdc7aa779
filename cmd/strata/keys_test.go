package main

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFormatKey(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want string
	}{
		{"user:42", "user:42"},
		{"0x1886", "0x1886"},
		{"a b", "a b"},
		{"it's", "it's"},
		{"café", "café"},
		{`{"name":"Ada"}`, `{"name":"Ada"}`},
		{"\x18\x86", `"\x18\x86"`},
		{"", `""`},
		{`"quoted"`, `"\"quoted\""`},
		{`"`, `"\""`},
		{" lead", `" lead"`},
		{"trail ", `"trail "`},
		{"two  spaces", `"two  spaces"`},
		{"a\nb", `"a\nb"`},
		{"tab\there", `"tab\there"`},
		{"k\xff", `"k\xff"`},
		{"\u00a0", `"\u00a0"`}, // a space, but not the ASCII one
	} {
		require.Equal(t, tc.want, formatKey([]byte(tc.key)), "%q", tc.key)
		got, err := parseKey(tc.want)
		require.NoError(t, err, tc.want)
		require.Equal(t, []byte(tc.key), got, tc.want)
	}
}

func TestParseKey(t *testing.T) {
	for _, s := range []string{"0x00ff", "'single'", `a"b`, "\\x00", "a\nb", " "} {
		got, err := parseKey(s)
		require.NoError(t, err, s)
		require.Equal(t, []byte(s), got, "%q is text", s)
	}
	for _, s := range []string{`"`, `"abc`, `"a"b"`, `"\q"`, `""x`} {
		_, err := parseKey(s)
		require.Error(t, err, "%q begins with a double quote and is not a Go string", s)
	}
}

// Every key prints in a form that reads back as it, and that form is
// plain text only for a key that is plain text: random keys, drawn from
// the bytes the syntax turns on.
func TestKeySyntaxRoundTrips(t *testing.T) {
	seed := rand.Uint64()
	r := rand.New(rand.NewPCG(seed, seed))
	alphabet := []byte("\"\\ 'x0aZ\n\t\x00\x7f\xff\xc3\xa9")
	for range 10000 {
		key := make([]byte, r.IntN(8))
		for i := range key {
			key[i] = alphabet[r.IntN(len(alphabet))]
		}
		printed := formatKey(key)
		got, err := parseKey(printed)
		require.NoError(t, err, "seed %d: %q printed %s", seed, key, printed)
		require.Equal(t, key, got, "seed %d: printed %s", seed, printed)
		require.Equal(t, plainText(key), printed == string(key), "seed %d: %q printed %s", seed, key, printed)
	}
}

// Every row db scan prints splits into a key and a value, each of which
// db get and --lower read back as the key and the value it is: a key
// cell that begins with a double quote is a Go string, which
// strconv.QuotedPrefix finds the end of, and any other is plain text,
// which holds no two spaces in a row.
func TestScanOutputReadsBack(t *testing.T) {
	seed := rand.Uint64()
	r := rand.New(rand.NewPCG(seed, seed))
	dir := filepath.Join(t.TempDir(), "db")
	alphabet := []byte("\"\\ 'x0a\n\x00\xff")
	want := map[string]string{}
	for range 40 {
		key, value := make([]byte, 1+r.IntN(6)), make([]byte, r.IntN(6))
		for i := range key {
			key[i] = alphabet[r.IntN(len(alphabet))]
		}
		for i := range value {
			value[i] = alphabet[r.IntN(len(alphabet))]
		}
		want[string(key)] = string(value)
		args := []string{"db", "put", "--hex", "--create", dir, hex.EncodeToString(key), hex.EncodeToString(value)}
		require.Equal(t, exitOK, run(args, &bytes.Buffer{}, &bytes.Buffer{}), "seed %d", seed)
	}
	var out, stderr bytes.Buffer
	require.Equal(t, exitOK, run([]string{"db", "scan", dir}, &out, &stderr), "seed %d: %s", seed, &stderr)
	rows := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, rows, len(want), "seed %d", seed)
	for _, row := range rows {
		keyCell, valueCell := splitRow(row)
		key, err := parseKey(keyCell)
		require.NoError(t, err, "seed %d: row %q", seed, row)
		value, err := parseKey(valueCell)
		require.NoError(t, err, "seed %d: row %q", seed, row)
		require.Equal(t, want[string(key)], string(value), "seed %d: row %q", seed, row)

		var got bytes.Buffer
		require.Equal(t, exitOK, run([]string{"db", "get", dir, keyCell}, &got, &stderr), "seed %d: %s", seed, &stderr)
		require.Equal(t, valueCell+"\n", got.String(), "seed %d", seed)
		got.Reset()
		require.Equal(t, exitOK, run([]string{"db", "scan", dir, "--lower", keyCell, "--limit", "1"}, &got, &stderr), "seed %d", seed)
		gotKey, gotValue := splitRow(strings.TrimSuffix(got.String(), "\n"))
		require.Equal(t, [2]string{keyCell, valueCell}, [2]string{gotKey, gotValue}, "seed %d", seed)
	}
}

// splitRow splits a row of db scan into its key and value cells.
func splitRow(row string) (key, value string) {
	if strings.HasPrefix(row, `"`) {
		key, _ = strconv.QuotedPrefix(row)
	} else {
		key, _, _ = strings.Cut(row, "  ")
	}
	return key, strings.TrimLeft(strings.TrimPrefix(row, key), " ")
}

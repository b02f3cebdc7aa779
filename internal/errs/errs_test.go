package errs

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	errInner = errors.New("vfs: lock held")
	errOther = errors.New("strata: not a database")
)

func TestErrorf(t *testing.T) {
	tests := []struct {
		name string
		err  error
		msg  string
		is   []error
	}{
		{"an inner name comes off", Errorf("simpledb: open %s: %w", "live", errInner), "simpledb: open live: lock held", []error{errInner}},
		{"each operand's", Errorf("simpledb: open: %w: %w", errOther, errInner), "simpledb: open: not a database: lock held", []error{errOther, errInner}},
		{"a chain made by Errorf", Errorf("simpledb: %w", Errorf("recordio: read: %w", errInner)), "simpledb: read: lock held", []error{errInner}},
		{"a format that starts with the operand", Errorf("%w: key %q", errInner, "k"), `vfs: lock held: key "k"`, []error{errInner}},
		{"an unnamed wrap", Errorf("flush: %w", errInner), "flush: lock held", []error{errInner}},
		{"a foreign name stays", Errorf("simpledb: %w", errors.New("zstd: bad frame")), "simpledb: zstd: bad frame", nil},
		{"a name must end the word", Errorf("simpledb: %w", errors.New("kvs: x")), "simpledb: kvs: x", nil},
		{"no operand", Errorf("simpledb: %d tables", 3), "simpledb: 3 tables", nil},
		{"a nil operand", Errorf("simpledb: %w", nil), "simpledb: %!w(<nil>)", nil},
		{"a value beside an error", Errorf("simpledb: %v and %w", "vfs: x", errInner), "simpledb: vfs: x and lock held", []error{errInner}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.EqualError(t, tt.err, tt.msg)
			for _, target := range tt.is {
				require.ErrorIs(t, tt.err, target)
			}
		})
	}
}

func TestErrorfUnwrapsOneOperandAsFmtDoes(t *testing.T) {
	err := Errorf("simpledb: %w", errInner)
	require.Same(t, errInner, errors.Unwrap(err))
}

// TestModuleWrapsThroughErrorf fails on a fmt.Errorf with %w in the
// module's packages, the CLI or raftstore: such a wrap keeps the inner
// package's name, and the message names two.
func TestModuleWrapsThroughErrorf(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	skip := map[string]bool{"benchmark": true, "examples": true, "prometheus": true, "testdata": true}
	var found []string
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (skip[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		file, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Errorf" {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "fmt" {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if format, err := strconv.Unquote(lit.Value); err == nil && strings.Contains(format, "%w") {
				found = append(found, fset.Position(call.Pos()).String())
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, found, "wrap through errs.Errorf, so that the message names one package")
}

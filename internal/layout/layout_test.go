package layout

import (
	"bufio"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/vit-train/vit-train/"

// root is the repository root, two folders up from this package.
const root = "../.."

// tableOrder returns the packages of the README's "How it is built" table,
// in order.
func tableOrder(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile("^\\| `([a-z0-9/_-]+)` \\|")
	var pkgs []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## How it is built"
		case in:
			if m := row.FindStringSubmatch(line); m != nil {
				pkgs = append(pkgs, m[1])
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(pkgs) == 0 {
		t.Fatal(`README.md has no "How it is built" table`)
	}
	return pkgs
}

// skipped are folders of Go code that are not part of the library's
// layering: helper programs and this test.
func skipped(dir string) bool {
	return strings.HasPrefix(dir, "scripts/") || strings.Contains(dir, "/internal/") || dir == "internal/layout"
}

// packageImports returns, for each folder with non-test Go files, the
// module's packages its files import (under every build tag).
func packageImports(t *testing.T) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && (name == "testdata" || (strings.HasPrefix(name, ".") && path != root)) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if out[rel] == nil {
			out[rel] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, module) {
				out[rel][strings.TrimPrefix(p, module)] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestNoPackageImportsUpward(t *testing.T) {
	order := tableOrder(t)
	rank := map[string]int{}
	for i, p := range order {
		if _, dup := rank[p]; dup {
			t.Errorf("README lists %s twice", p)
		}
		rank[p] = i
	}
	imports := packageImports(t)
	for dir := range imports {
		if _, ok := rank[dir]; !ok && !skipped(dir) && dir != "." {
			t.Errorf("package %s is missing from README's \"How it is built\" table", dir)
		}
	}
	for _, p := range order {
		if _, ok := imports[p]; !ok {
			t.Errorf("README lists %s, which has no Go files", p)
		}
		for imp := range imports[p] {
			r, listed := rank[imp]
			switch {
			case !listed && strings.Contains(imp, "/internal/"):
				// A package's own internal helpers.
			case !listed:
				t.Errorf("%s imports %s, which README does not list", p, imp)
			case r <= rank[p]:
				t.Errorf("%s imports %s, which README lists before it: the layering goes upward", p, imp)
			}
		}
	}
}

package studytest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The README's study section and docs/experiments' guide give only
// figures that the reports they name print.
func TestDocumentsQuoteTheirReports(t *testing.T) {
	root := ChdirRoot(t)
	for _, doc := range []struct{ path, section string }{
		{"README.md", "### Does it work? The study"},
		{filepath.Join("docs", "experiments", "README.md"), ""},
	} {
		bad, err := Misquotes(root, filepath.Join(root, doc.path), doc.section)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range bad {
			t.Errorf("%s %v", doc.path, m)
		}
	}
}

// Misquotes finds a figure that the linked report does not print, reads
// a list item to its end, and leaves out passages that link no report
// and fenced blocks.
func TestMisquotesFindsAFigureNotInTheReport(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) string {
		path := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("docs/experiments/a.md", "| (d) | 85.99 ± 0.38 | t = -3.07 |\n")
	write("docs/superseded/b.md", "the margin 0.5 points\n")
	doc := write("docs/experiments/README.md", "# Guide\n\n## Results\n\n"+
		"- [a.md](a.md): (d) reaches 85.99 ± 0.38%,\n  t = −3.07, and 1.33 below.\n"+
		"- [b](../superseded/b.md): 0.5 points, not 0.50 nor 10.5.\n\n"+
		"A passage without a report: 12.5.\n\n```sh\n# a comment, not a heading\n[a.md](a.md) 9.99\n```\n\n"+
		"- [a.md](a.md): 2.5\n\n"+
		"## Next\n\n[a.md](a.md) 7.25\n")
	got, err := Misquotes(root, doc, "## Results")
	if err != nil {
		t.Fatal(err)
	}
	var figs []string
	for _, m := range got {
		figs = append(figs, m.Figure)
	}
	if want := []string{"1.33", "0.50", "10.5", "2.5"}; !slices.Equal(figs, want) {
		t.Errorf("misquoted %q, want %q", figs, want)
	}
	if len(got) > 0 && (got[0].Line != 5 || !slices.Equal(got[0].Reports, []string{"docs/experiments/a.md"})) {
		t.Errorf("first misquote %+v, want line 5 and docs/experiments/a.md", got[0])
	}
	if _, err := Misquotes(root, doc, "## Missing"); err == nil {
		t.Error("a section the document lacks")
	}
	broken := write("docs/experiments/broken.md", "- [gone](superseded/a.md): 1.5\n")
	if _, err := Misquotes(root, broken, ""); err == nil {
		t.Error("a link to a report that does not exist")
	}
}

package studytest

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// A Misquote is a figure that a passage of a hand-written document gives
// although none of the reports the passage links prints it.
type Misquote struct {
	Line    int      // the passage's first line, from 1
	Figure  string   // a decimal number, as the passage writes it
	Reports []string // the reports the passage links
}

func (m Misquote) String() string {
	return fmt.Sprintf("line %d: %s is in none of %s", m.Line, m.Figure, strings.Join(m.Reports, ", "))
}

var (
	mdLink  = regexp.MustCompile(`\]\(([^)#\s]+\.md)\)`)
	decimal = regexp.MustCompile(`\d+\.\d+`)
)

// Misquotes checks the document at path, whose links are relative to its
// folder: every decimal number in a passage (a paragraph or a list item)
// that links reports must be printed by one of those reports, so that the
// document quotes its figures rather than restating them. A report is a
// Markdown file in docs/experiments other than its README, or any in
// docs/superseded (whose README records the verdicts recomputed from the
// reports there); root is the repository root. A link to a Markdown file
// that does not exist is an error. Passages that link no report are not
// checked. Only the lines from the one that equals from
// (all when from is "") up to the next heading of the same or a higher
// level are read.
func Misquotes(root, path, from string) ([]Misquote, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines, first, err := section(strings.Split(string(raw), "\n"), from)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []Misquote
	for _, p := range passages(lines) {
		reports, err := linkedReports(root, filepath.Dir(path), p.text)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, first+p.line, err)
		}
		if len(reports) == 0 {
			continue
		}
		printed := ""
		for _, r := range reports {
			text, err := os.ReadFile(filepath.Join(root, r))
			if err != nil {
				return nil, fmt.Errorf("%s line %d: %w", path, first+p.line, err)
			}
			printed += string(text) + "\n"
		}
		for _, fig := range decimal.FindAllString(p.text, -1) {
			if !prints(printed, fig) {
				out = append(out, Misquote{Line: first + p.line, Figure: fig, Reports: reports})
			}
		}
	}
	return out, nil
}

// section returns the lines of the section headed by the line from, and
// the number of lines before it.
func section(lines []string, from string) ([]string, int, error) {
	if from == "" {
		return lines, 0, nil
	}
	start := -1
	for i, l := range lines {
		if l == from {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, 0, fmt.Errorf("no line %q", from)
	}
	level := headingLevel(from)
	end, fenced := len(lines), false
	for i := start + 1; i < len(lines); i++ {
		if strings.HasPrefix(strings.TrimSpace(lines[i]), "```") {
			fenced = !fenced
		}
		if h := headingLevel(lines[i]); !fenced && h > 0 && h <= level && strings.HasPrefix(lines[i][h:], " ") {
			end = i
			break
		}
	}
	return lines[start:end], start, nil
}

// headingLevel is how many "#" line starts with.
func headingLevel(line string) int { return len(line) - len(strings.TrimLeft(line, "#")) }

type passage struct {
	line int // from 1, in the lines given to passages
	text string
}

// passages splits Markdown lines into paragraphs and list items: a list
// item runs from its "- " line to the next item, a blank line or a fenced
// block, and a paragraph to the next blank line, item or fence. Fenced
// blocks are left out.
func passages(lines []string) []passage {
	var out []passage
	var cur *passage
	fenced := false
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			flush()
			fenced = !fenced
		case fenced:
		case trimmed == "":
			flush()
		case strings.HasPrefix(trimmed, "- ") || cur == nil:
			flush()
			cur = &passage{line: i + 1, text: l}
		default:
			cur.text += "\n" + l
		}
	}
	flush()
	return out
}

// linkedReports lists, relative to root, the reports that text links,
// its links being relative to dir.
func linkedReports(root, dir, text string) ([]string, error) {
	var out []string
	for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
		linked := filepath.Join(dir, m[1])
		if _, err := os.Stat(linked); err != nil {
			return nil, fmt.Errorf("a link to %s: %w", m[1], err)
		}
		rel, err := filepath.Rel(root, linked)
		if err != nil {
			return nil, err
		}
		rel = filepath.ToSlash(rel)
		folder, base := path.Split(rel)
		if folder == "docs/superseded/" || folder == "docs/experiments/" && base != "README.md" {
			out = append(out, rel)
		}
	}
	return out, nil
}

// prints reports whether text holds fig as a whole number, not as a part
// of a longer one.
func prints(text, fig string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], fig)
		if j < 0 {
			return false
		}
		at, end := i+j, i+j+len(fig)
		before := at == 0 || !isDigit(text[at-1]) && text[at-1] != '.'
		after := end == len(text) || !isDigit(text[end]) && !(text[end] == '.' && end+1 < len(text) && isDigit(text[end+1]))
		if before && after {
			return true
		}
		i = at + 1
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

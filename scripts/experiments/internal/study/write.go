package study

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Report is what a study writes from its results.
type Report interface {
	Markdown() string
	// WriteFigures writes the report's PNG figures into dir.
	WriteFigures(dir string) error
	// SummaryText is what --quick prints at the end.
	SummaryText() string
	Missing() []string
	FailedChecks() []string
}

// WriteReport writes rep as OUT/NAME.md with its figures, prints its
// summary in quick mode, and fails when runs are missing (after training
// them) or a consistency check failed.
func WriteReport(c Common, name string, rep Report, start time.Time) error {
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return err
	}
	if err := rep.WriteFigures(c.Out); err != nil {
		return err
	}
	path := filepath.Join(c.Out, name+".md")
	if err := WriteFileAtomic(path, []byte(rep.Markdown())); err != nil {
		return err
	}
	fmt.Printf("\nwrote %s and its figures (%s)\n", path, time.Since(start).Round(time.Second))
	if c.Quick {
		fmt.Print("\n" + rep.SummaryText())
	}
	if !c.ReportOnly {
		if missing := rep.Missing(); len(missing) > 0 {
			return fmt.Errorf("the report lacks results of %v", missing)
		}
	}
	if bad := rep.FailedChecks(); len(bad) > 0 {
		return fmt.Errorf("consistency checks failed: %v", bad)
	}
	return nil
}

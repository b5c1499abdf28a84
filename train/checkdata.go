package train

import (
	"fmt"
	"io"
	"runtime"

	"github.com/vit-train/vit-train/data"
)

// CheckData reads and decodes every file of the image folders cfg names
// (data.dataset = imagefolder, both splits, whatever the subsets), before
// a run, and prints each file that cannot be used, with why, and their
// count: all at once, rather than one at a time during training. Unusable
// files are an error unless data.skip_corrupt is set (the run then skips
// them). Other datasets are read whole when they are opened.
func CheckData(cfg DataConfig, w io.Writer) error {
	ds, err := OpenDatasets(cfg)
	if err != nil {
		return err
	}
	var bad []data.SkippedFile
	files := 0
	for _, d := range []data.Dataset{ds.Train, ds.Eval} {
		if f, ok := data.FolderOf(d); ok {
			files += f.Len()
			bad = append(bad, f.Check(max(cfg.Workers, runtime.GOMAXPROCS(0)))...)
		}
	}
	switch {
	case files == 0:
		fmt.Fprintf(w, "data check: data.dataset = %s was read whole when opened; nothing more to check\n", cfg.Dataset)
		return nil
	case len(bad) == 0:
		fmt.Fprintf(w, "data check: all %d files of data.root = %s can be read\n", files, cfg.Root)
		return nil
	}
	fmt.Fprintf(w, "data check: %d of the %d files of data.root = %s cannot be read:\n", len(bad), files, cfg.Root)
	for _, b := range bad {
		fmt.Fprintf(w, "  %v\n", b.Err)
	}
	if cfg.SkipCorrupt {
		fmt.Fprintln(w, "data check: data.skip_corrupt is set: the run skips them")
		return nil
	}
	return fmt.Errorf("data check: %d of the %d files of data.root = %s cannot be read (listed above): replace or remove them, or set data.skip_corrupt=true to skip them", len(bad), files, cfg.Root)
}

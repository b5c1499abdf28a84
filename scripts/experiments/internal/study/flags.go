package study

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Common are the settings every study command takes.
type Common struct {
	Quick      bool
	ReportOnly bool
	Rebuild    bool

	TrainSubset int // N training images (data.train_subset), 0 for all
	EvalSubset  int // N test images (data.eval_subset), 0 for all

	Data string // Fashion-MNIST IDX folder
	Out  string // report and figures
	Work string // run folders
	Bin  string // a vit-train binary to use instead of building one
	BLAS string // auto, openblas or go

	// Jobs is how many runs train at once (see Execute).
	Jobs int
}

// QuickSubset is the number of training and of test images of --quick.
const QuickSubset = 384

// DefaultCommon are the full study's common settings for the command
// named name: run folders in runs/experiments/NAME, the report in
// docs/experiments (both relative to the repository root).
func DefaultCommon(name string) Common {
	return Common{
		Data: "/usr/share/datasets/fashion-mnist",
		Out:  "docs/experiments",
		Work: "runs/experiments/" + name,
		BLAS: "go",
		Jobs: 1,
	}
}

// CountFlag is one of the flags that size a study (seeds and epochs):
// each is at least 1, and --quick sets it to 1.
type CountFlag struct {
	Name  string
	Value *int
	Usage string
}

// QuickDefaults sets the count flags and the subsets that the command line
// did not set (set) to --quick's values.
func QuickDefaults(c *Common, counts []CountFlag, set map[string]bool) {
	for _, f := range counts {
		if !set[f.Name] {
			*f.Value = 1
		}
	}
	if !set["train-subset"] {
		c.TrainSubset = QuickSubset
	}
	if !set["eval-subset"] {
		c.EvalSubset = QuickSubset
	}
}

// Command describes a study command for its flags.
type Command struct {
	Name  string // the folder under scripts/experiments, and its report's base name
	About string // what it does, for --help
	// Counts are its seed and epoch flags, with their defaults in place.
	Counts []CountFlag
	// Extra registers the command's other flags.
	Extra func(fs *flag.FlagSet)
}

// Parse reads args into c (which holds the defaults) and the count flags:
// --quick's defaults, checks, the default folders made absolute (the
// repository's for a full study, a temporary folder for --quick). It
// returns the names of the flags the command line set.
func Parse(cmd Command, args []string, c *Common) (map[string]bool, error) {
	fs := flag.NewFlagSet(cmd.Name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: go run ./scripts/experiments/%s [--quick] [flags]\n\n%s\n\n", cmd.Name, cmd.About)
		fs.PrintDefaults()
	}
	fs.BoolVar(&c.Quick, "quick", false, fmt.Sprintf("check the pipeline end to end: 1 seed, 1 epoch per run, %d training and %d test images, in a temporary folder (unless --work/--out)", QuickSubset, QuickSubset))
	fs.BoolVar(&c.ReportOnly, "report-only", false, "train nothing: write the report from the runs finished so far")
	for _, f := range cmd.Counts {
		fs.IntVar(f.Value, f.Name, *f.Value, f.Usage)
	}
	if cmd.Extra != nil {
		cmd.Extra(fs)
	}
	fs.IntVar(&c.TrainSubset, "train-subset", 0, "train on N training images, drawn to cover the classes (0: all 60,000)")
	fs.IntVar(&c.EvalSubset, "eval-subset", 0, "evaluate on N test images, drawn to cover the classes (0: all 10,000)")
	fs.StringVar(&c.Data, "data", c.Data, "folder of the Fashion-MNIST IDX files")
	fs.StringVar(&c.Out, "out", c.Out, "folder for "+cmd.Name+".md and its figures (the default is relative to the repository root)")
	fs.StringVar(&c.Work, "work", c.Work, "folder for the run folders and the vit-train binary (the default is relative to the repository root)")
	fs.StringVar(&c.Bin, "bin", "", "vit-train binary to use instead of building one")
	fs.BoolVar(&c.Rebuild, "rebuild", false, "build vit-train again although the work folder holds the one built for the study")
	fs.IntVar(&c.Jobs, "jobs", c.Jobs, "runs to train at once, each vit-train on CPUs/jobs threads (GOMAXPROCS); a run starts once the runs whose outputs it reads have finished")
	fs.StringVar(&c.BLAS, "blas", c.BLAS, "build: go (the default build, Go assembly kernels: the fastest), openblas (-tags openblas), or auto (openblas when libopenblas-dev is installed)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if c.Quick {
		QuickDefaults(c, cmd.Counts, set)
	}
	for _, f := range cmd.Counts {
		if *f.Value < 1 {
			return nil, fmt.Errorf("--%s %d: must be at least 1", f.Name, *f.Value)
		}
	}
	if c.Jobs < 1 {
		return nil, fmt.Errorf("--jobs %d: must be at least 1", c.Jobs)
	}
	if c.TrainSubset < 0 || c.EvalSubset < 0 {
		return nil, errors.New("--train-subset and --eval-subset must not be negative")
	}
	switch c.BLAS {
	case "auto", "openblas", "go":
	default:
		return nil, fmt.Errorf("--blas %q: want auto, openblas or go", c.BLAS)
	}
	if err := c.placeFolders(cmd.Name, set); err != nil {
		return nil, err
	}
	return set, nil
}

// placeFolders puts the folders the command line did not give in a
// temporary folder (--quick) or the repository, and makes every path
// absolute.
func (c *Common) placeFolders(name string, set map[string]bool) error {
	switch {
	case c.Quick && (!set["work"] || !set["out"]):
		tmp, err := os.MkdirTemp("", "vit-train-"+name+"-quick-")
		if err != nil {
			return err
		}
		if !set["work"] {
			c.Work = filepath.Join(tmp, "runs")
		}
		if !set["out"] {
			c.Out = filepath.Join(tmp, "report")
		}
	case !c.Quick && (!set["work"] || !set["out"]):
		// The default folders are the repository's, wherever it runs from.
		root, err := ModuleRoot()
		if err != nil {
			return err
		}
		if !set["out"] {
			c.Out = filepath.Join(root, c.Out)
		}
		if !set["work"] {
			c.Work = filepath.Join(root, c.Work)
		}
	}
	var err error
	for _, p := range []*string{&c.Data, &c.Out, &c.Work} {
		if *p, err = filepath.Abs(*p); err != nil {
			return err
		}
	}
	if c.Bin != "" {
		if c.Bin, err = filepath.Abs(c.Bin); err != nil {
			return err
		}
	}
	return nil
}

// FlagsLine is the command's flags that differ from the defaults of its
// mode (the full study's, or --quick's): counts against defCounts (the
// same flags holding the full study's defaults), then extra.
func FlagsLine(c Common, counts, defCounts []CountFlag, defData string, extra ...string) string {
	var s []string
	defSubset := 0
	if c.Quick {
		s = append(s, "--quick")
		defSubset = QuickSubset
	}
	for i, f := range counts {
		def := *defCounts[i].Value
		if c.Quick {
			def = 1
		}
		if *f.Value != def {
			s = append(s, fmt.Sprintf("--%s %d", f.Name, *f.Value))
		}
	}
	s = append(s, extra...)
	for _, f := range []struct {
		name string
		v    int
	}{{"train-subset", c.TrainSubset}, {"eval-subset", c.EvalSubset}} {
		if f.v != defSubset {
			s = append(s, fmt.Sprintf("--%s %d", f.name, f.v))
		}
	}
	if c.Data != defData {
		s = append(s, "--data "+QuoteArgs([]string{c.Data}))
	}
	if c.Jobs > 1 {
		s = append(s, fmt.Sprintf("--jobs %d", c.Jobs))
	}
	if len(s) == 0 {
		return ""
	}
	return " " + strings.Join(s, " ")
}

// ContinueCommand is the command that continues a stopped study named
// name, run with c and the flags flagsLine.
func ContinueCommand(name string, c Common, flagsLine string) string {
	return "go run ./scripts/experiments/" + name + flagsLine + c.folderFlags(name)
}

// ReportCommand is the command, run with c and the flags flagsLine, that
// writes a study's report, for the report to name: ContinueCommand's, and
// the flags that picked the binary and whether to train.
func ReportCommand(name string, c Common, flagsLine string) string {
	cmd := "go run ./scripts/experiments/" + name + flagsLine
	if c.ReportOnly {
		cmd += " --report-only"
	}
	if c.Bin != "" {
		cmd += " --bin " + QuoteArgs([]string{RelPath(c.Bin)})
	}
	if d := DefaultCommon(name); c.BLAS != d.BLAS {
		cmd += " --blas " + c.BLAS
	}
	return cmd + c.folderFlags(name)
}

// folderFlags are the --work and --out flags that put c's folders where
// they are, for the study named name ("" for a full study's defaults):
// each relative to the current folder when inside it (a report's folder
// in the repository), else absolute.
func (c Common) folderFlags(name string) string {
	d := DefaultCommon(name)
	work, out := RelPath(c.Work), RelPath(c.Out)
	if c.Quick || work != d.Work || out != d.Out {
		return " --work " + QuoteArgs([]string{work}) + " --out " + QuoteArgs([]string{out})
	}
	return ""
}

// Main is a study command's main: it parses args with parse (exit status
// 2 on a bad flag, 0 after -h) and runs the study with run (exit status
// 130 when interrupted, 1 on another error), each error printed after
// the command's name.
func Main[O any](name string, args []string, parse func([]string) (O, error), run func(O) error) {
	o, err := parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		if errors.Is(err, ErrInterrupted) {
			os.Exit(130)
		}
		os.Exit(1)
	}
}

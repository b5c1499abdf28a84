package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/vit-train/vit-train/formats/atomicfile"
)

// errInterrupted is returned when a signal stopped the study.
var errInterrupted = errors.New("interrupted")

// buildInfo describes the vit-train binary a study runs.
type buildInfo struct {
	Bin    string `json:"-"`
	Tags   string `json:"tags"`   // openblas, default (Go assembly), or given with --bin
	Commit string `json:"commit"` // the working tree it was built from
	SHA256 string `json:"-"`
}

// buildBinary builds vit-train into the work folder (with -tags openblas
// when o.blas asks for it, or when libopenblas-dev is installed and o.blas
// is auto), or reuses the one built there before, so that a resumed study
// runs the same binary although the working tree has changed; --rebuild
// builds it again and --bin names another binary.
func buildBinary(ctx context.Context, o options) (b buildInfo, err error) {
	defer func() {
		if err == nil {
			b.SHA256, err = fileSHA256(b.Bin)
		}
	}()
	if o.bin != "" {
		return buildInfo{Bin: o.bin, Tags: "given with --bin", Commit: "unknown"}, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return b, err
	}
	useOpenBLAS := o.blas == "openblas" || (o.blas == "auto" && openBLASInstalled())
	b = buildInfo{Bin: filepath.Join(o.work, "bin", "vit-train"), Tags: "default (Go assembly)"}
	if useOpenBLAS {
		b.Tags = "openblas"
	}
	infoFile := b.Bin + ".json"
	if !o.rebuild {
		var old buildInfo
		if readJSON(infoFile, &old) == nil && old.Tags == b.Tags {
			if _, err := os.Stat(b.Bin); err == nil {
				fmt.Printf("using the vit-train built for this study (%s build of %s; --rebuild builds it again)\n", old.Tags, old.Commit)
				old.Bin = b.Bin
				return old, nil
			}
		}
	}
	args := []string{"build", "-o", b.Bin}
	if useOpenBLAS {
		args = append(args, "-tags", "openblas")
	}
	args = append(args, "./cmd/vit-train")
	fmt.Printf("building vit-train: go %s\n", strings.Join(args, " "))
	b.Commit = gitCommit(root)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return b, errInterrupted
		}
		return b, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	js, err := json.Marshal(b)
	if err != nil {
		return b, err
	}
	return b, writeFileAtomic(infoFile, js)
}

// fileSHA256 is the hex SHA-256 of a file's content.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// moduleRoot is the folder of the vit-train module's go.mod.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run the command inside the vit-train repository (go env GOMOD finds no go.mod)")
	}
	b, err := os.ReadFile(mod)
	if err != nil {
		return "", err
	}
	if !bytes.Contains(b, []byte("module github.com/vit-train/vit-train\n")) {
		return "", fmt.Errorf("%s is not vit-train's go.mod", mod)
	}
	return filepath.Dir(mod), nil
}

// openBLASInstalled reports whether Debian's libopenblas-dev is installed.
func openBLASInstalled() bool {
	out, err := exec.Command("dpkg-query", "-W", "-f=${Status}", "libopenblas-dev").Output()
	return err == nil && strings.Contains(string(out), "install ok installed")
}

// gitCommit describes the working tree at dir.
func gitCommit(dir string) string {
	git := func(args ...string) ([]byte, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		return cmd.Output()
	}
	out, err := git("rev-parse", "--short=12", "HEAD")
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := git("status", "--porcelain", "--untracked-files=no"); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += " with uncommitted changes"
	}
	return c
}

// runner runs the study's commands one at a time.
type runner struct {
	build buildInfo
	out   io.Writer
}

// attempt is one vit-train process of a run.
type attempt struct {
	Start  time.Time `json:"start"`
	Args   []string  `json:"args"`
	WallS  float64   `json:"wall_s"`
	CPUS   float64   `json:"cpu_s"` // user + system
	Status int       `json:"exit_status"`
}

// doneRecord marks a finished training run.
type doneRecord struct {
	ID       string    `json:"id"`
	Args     []string  `json:"args"` // the command that started it
	Attempts []attempt `json:"attempts"`
	WallS    float64   `json:"wall_s"`
	CPUS     float64   `json:"cpu_s"`
	Build    string    `json:"build"`
	Commit   string    `json:"commit"`
	Binary   string    `json:"binary_sha256"`
}

// do trains r (skipped when finished, resumed when stopped) and writes the
// outputs the report reads: the evaluation of last.safetensors, the test
// logits and, for a teacher of the .npy arm, the training logits.
func (rn *runner) do(ctx context.Context, r runSpec, i, n int) error {
	tag := fmt.Sprintf("[%d/%d] %s", i, n, r.ID)
	if _, err := os.Stat(r.doneFile()); err == nil {
		fmt.Fprintf(rn.out, "%s: finished, skipped\n", tag)
	} else if err := rn.train(ctx, r, tag); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(r.evalDir(), "eval.json")); err != nil && !r.ResNet {
		tmp := r.evalDir() + ".tmp"
		if err := os.RemoveAll(tmp); err != nil {
			return err
		}
		if _, err := rn.exec(ctx, r, []string{"eval", "--checkpoint", r.last(), "--out", tmp}); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		if err := os.Rename(tmp, r.evalDir()); err != nil {
			return err
		}
	}
	logits := []struct {
		split, path string
	}{{"test", r.testLogits()}}
	if r.TrainLogits {
		logits = append(logits, struct{ split, path string }{"train", r.trainLogits()})
	}
	for _, l := range logits {
		if _, err := os.Stat(l.path); err == nil {
			continue
		}
		tmp := strings.TrimSuffix(l.path, ".npy") + ".tmp.npy"
		if _, err := rn.exec(ctx, r, []string{"logits", "--checkpoint", r.last(), "--split", l.split, "--out", tmp}); err != nil {
			return fmt.Errorf("logits --split %s: %w", l.split, err)
		}
		if err := os.Rename(tmp, l.path); err != nil {
			return err
		}
	}
	return nil
}

// train runs vit-train until r's run is finished: from the start, or from
// its last checkpoint with --resume.
func (rn *runner) train(ctx context.Context, r runSpec, tag string) error {
	args := r.Args
	_, err := os.Stat(r.last())
	switch {
	case err == nil:
		args = []string{"train", "--out", r.Dir, "--resume"}
		fmt.Fprintf(rn.out, "%s: resuming (%s)\n", tag, plural(r.Epochs, "epoch"))
	case errors.Is(err, os.ErrNotExist):
		// A folder without a checkpoint holds nothing to continue from:
		// start afresh.
		if err := removeUncheckpointed(r.Dir); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(r.Dir), 0o755); err != nil {
			return err
		}
		fmt.Fprintf(rn.out, "%s: training (%s)\n", tag, plural(r.Epochs, "epoch"))
	default:
		return err
	}
	if _, err := rn.exec(ctx, r, args); err != nil {
		return err
	}
	rec := doneRecord{ID: r.ID, Args: append([]string{"vit-train"}, r.Args...), Build: rn.build.Tags, Commit: rn.build.Commit, Binary: rn.build.SHA256}
	atts, err := readAttempts(r.Dir + ".attempts.jsonl")
	if err != nil {
		return err
	}
	for _, a := range atts {
		if a.Args[0] == "train" || a.Args[0] == "finetune" {
			rec.Attempts = append(rec.Attempts, a)
			rec.WallS += a.WallS
			rec.CPUS += a.CPUS
		}
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(r.doneFile(), append(b, '\n')); err != nil {
		return err
	}
	fmt.Fprintf(rn.out, "%s: done in %s (CPU %s)\n", tag, dur(rec.WallS), dur(rec.CPUS))
	return nil
}

// removeUncheckpointed removes a run folder that holds no checkpoint (a
// run stopped before its first one).
func removeUncheckpointed(dir string) error {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	ck, err := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	if err != nil {
		return err
	}
	if len(ck) > 0 {
		return fmt.Errorf("%s holds %s but no last.safetensors: remove the folder to train the run again", dir, filepath.Base(ck[0]))
	}
	return os.RemoveAll(dir)
}

// exec runs vit-train with args, its output appended to r's log, in its
// own process group: a signal to the study is passed to it once (vit-train
// then saves a checkpoint and exits) and the study stops. Each attempt is
// recorded in the run's attempts log.
func (rn *runner) exec(ctx context.Context, r runSpec, args []string) (attempt, error) {
	log, err := os.OpenFile(r.logFile(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return attempt{}, err
	}
	defer log.Close()
	fmt.Fprintf(log, "\n$ %s %s\n", rn.build.Bin, quoteArgs(args))
	cmd := exec.Command(rn.build.Bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	a := attempt{Start: time.Now(), Args: args}
	// Every SIGINT or SIGTERM the study receives goes to vit-train: the
	// first stops it with a checkpoint, a second ends it at once. One that
	// came before has cancelled ctx.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if ctx.Err() != nil {
		return a, fmt.Errorf("%w before %s", errInterrupted, r.ID)
	}
	if err := cmd.Start(); err != nil {
		return a, err
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	werr := cmd.Wait()
	close(done)
	a.WallS = time.Since(a.Start).Seconds()
	if ps := cmd.ProcessState; ps != nil {
		a.CPUS = (ps.UserTime() + ps.SystemTime()).Seconds()
		a.Status = ps.ExitCode()
	}
	if err := appendAttempt(r.Dir+".attempts.jsonl", a); err != nil {
		return a, err
	}
	if ctx.Err() != nil {
		return a, fmt.Errorf("%w during %s (vit-train exit status %d; log %s)", errInterrupted, r.ID, a.Status, r.logFile())
	}
	if werr != nil {
		return a, fmt.Errorf("vit-train %s: %w\n%s", args[0], werr, tail(r.logFile(), 15))
	}
	return a, nil
}

func appendAttempt(path string, a attempt) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readAttempts reads an attempts log, skipping a partial last line.
func readAttempts(path string) ([]attempt, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []attempt
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var a attempt
		if json.Unmarshal(sc.Bytes(), &a) == nil && len(a.Args) > 0 {
			out = append(out, a)
		}
	}
	return out, sc.Err()
}

// tail returns the last n lines of a file, indented.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}

// quoteArgs writes args for a shell.
func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			q[i] = a
		}
	}
	return strings.Join(q, " ")
}

// dur formats seconds as a duration.
func dur(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Second).String()
}

// writeFileAtomic writes b to path through a synced temporary file.
func writeFileAtomic(path string, b []byte) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

package study

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Build describes the vit-train binary a study runs.
type Build struct {
	Bin    string `json:"-"`
	Tags   string `json:"tags"`   // openblas, default (Go assembly), or given with --bin
	Commit string `json:"commit"` // the working tree it was built from
	SHA256 string `json:"-"`
}

// BuildBinary builds vit-train into the work folder (with -tags openblas
// when c.BLAS asks for it, or when libopenblas-dev is installed and c.BLAS
// is auto), or reuses the one built there before, so that a resumed study
// runs the same binary although the working tree has changed; --rebuild
// builds it again and --bin names another binary.
func BuildBinary(ctx context.Context, c Common) (b Build, err error) {
	defer func() {
		if err == nil {
			b.SHA256, err = fileSHA256(b.Bin)
		}
	}()
	if c.Bin != "" {
		return Build{Bin: c.Bin, Tags: "given with --bin", Commit: binaryCommit(c.Bin)}, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return b, err
	}
	useOpenBLAS := c.BLAS == "openblas" || (c.BLAS == "auto" && openBLASInstalled())
	b = Build{Bin: filepath.Join(c.Work, "bin", "vit-train"), Tags: "default (Go assembly)"}
	if useOpenBLAS {
		b.Tags = "openblas"
	}
	infoFile := b.Bin + ".json"
	if !c.Rebuild {
		var old Build
		if ReadJSON(infoFile, &old) == nil && old.Tags == b.Tags {
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
			return b, ErrInterrupted
		}
		return b, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	js, err := json.Marshal(b)
	if err != nil {
		return b, err
	}
	return b, WriteFileAtomic(infoFile, js)
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

// ModuleRoot is the folder of the vit-train module's go.mod.
func ModuleRoot() (string, error) {
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

// binaryCommit is the commit a Go binary records it was built from (go
// build stamps it inside a git checkout), or "not recorded in the binary".
func binaryCommit(path string) string {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return "not recorded in the binary"
	}
	commit, modified := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value[:min(12, len(s.Value))]
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	switch {
	case commit == "":
		return "not recorded in the binary"
	case modified:
		return commit + " with uncommitted changes"
	}
	return commit
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

package data

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// scripts/fetch_cifar.sh refuses an archive whose MD5 is not the published
// one and leaves nothing behind.
func TestFetchCIFARScriptChecksMD5(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	src, dst := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "cifar-10-binary.tar.gz"), []byte("not the real archive"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "../scripts/fetch_cifar.sh", "-d", dst, "cifar10")
	cmd.Env = append(os.Environ(), "CIFAR_BASE_URL=file://"+src)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "want c32a1d4ab5d03f1284b67883e8d87530") {
		t.Fatalf("script accepted a wrong archive: %v\n%s", err, out)
	}
	if left, _ := os.ReadDir(dst); len(left) != 0 {
		t.Errorf("files left behind: %v", left)
	}
	bad := exec.Command("bash", "../scripts/fetch_cifar.sh", "-d", dst, "cifar11")
	if out, err := bad.CombinedOutput(); err == nil || !strings.Contains(string(out), "unknown dataset cifar11") {
		t.Errorf("unknown dataset accepted: %s", out)
	}
}

package data

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Limits on the trees FuzzImageFolder builds.
const (
	fuzzMaxEntries = 24
	fuzzMaxDepth   = 4
	fuzzMaxName    = 64
)

// folderEntry is one path of a fuzzed tree: a file, or a folder when dir.
type folderEntry struct {
	parts []string
	dir   bool
}

// parseTree reads one relative path per line, "/" between names; a
// trailing "/" makes a folder. Names that no file system allows here (empty,
// ".", "..", NUL, over fuzzMaxName bytes) are left out, as are lines past
// the limits.
func parseTree(spec string) []folderEntry {
	var out []folderEntry
	for _, line := range strings.Split(spec, "\n") {
		if len(out) == fuzzMaxEntries {
			break
		}
		dir := strings.HasSuffix(line, "/")
		var parts []string
		for _, p := range strings.Split(line, "/") {
			if p == "" || p == "." || p == ".." || strings.ContainsRune(p, 0) || len(p) > fuzzMaxName {
				continue
			}
			parts = append(parts, p)
		}
		if len(parts) == 0 || len(parts) > fuzzMaxDepth || (len(parts) == 1 && !dir) {
			continue // files go inside a class folder
		}
		out = append(out, folderEntry{parts, dir})
	}
	return out
}

// FuzzImageFolder builds a folder tree from fuzzed names (unicode, dots,
// spaces, hidden files, case-varied extensions, nested and empty folders;
// no links) and checks OpenImageFolder's listing against torchvision's
// rules: classes are the sorted top-level folders, files with an accepted
// extension are listed folder by folder in sorted path order, sorted
// within a folder; image files of other formats are listed in Unread in
// the same order.
func FuzzImageFolder(f *testing.F) {
	f.Add("cat/a.png\ncat/b.JPG\ndog/x.jpeg\n")
	f.Add("ünïcode clåss/bild 1.png\n.hidden/.x.png\nspace s/ sp .jpg\n")
	f.Add("a/sub/z.png\na/a.png\na/sub2/\nb/.png\nb/readme.txt\n")
	f.Add("empty/\nfull/f.png\n")
	f.Add("a.b/c.d.png\na.b/c.d.png.tmp-1\nc/x.png/\nc/y.png\n")
	f.Add("a/x.webp\na/y.png\na/s/z.TIFF\nb/q.heic.png\nb/r.png.heic\n")
	base := fuzzTempDir(f)
	f.Fuzz(func(t *testing.T, spec string) {
		entries := parseTree(spec)
		root, err := os.MkdirTemp(base, "tree")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(root)
		isDirAt := map[string]bool{}
		var files []string
		for _, e := range entries {
			p := filepath.Join(append([]string{root}, e.parts...)...)
			parent := p
			if !e.dir {
				parent = filepath.Dir(p)
			}
			if err := os.MkdirAll(parent, 0o755); err != nil {
				return // a name clashes with a file made earlier
			}
			for d := parent; d != root; d = filepath.Dir(d) {
				isDirAt[d] = true
			}
			if e.dir {
				continue
			}
			if isDirAt[p] {
				continue // already a folder
			}
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				return
			}
			files = append(files, p)
		}
		files = dedupe(files)

		got, err := OpenImageFolder(root, FolderOptions{})
		want, wantErr := expectedListing(root, isDirAt, files)
		if err != nil {
			if !strings.Contains(err.Error(), root) {
				t.Fatalf("error does not name the folder %s: %v", root, err)
			}
			if wantErr == "" {
				t.Fatalf("rejected a valid tree %q: %v", spec, err)
			}
			return
		}
		if wantErr != "" {
			t.Fatalf("accepted a tree with %s: %+v", wantErr, got)
		}
		if !slices.Equal(got.Classes(), want.classes) {
			t.Fatalf("classes %q, want %q", got.Classes(), want.classes)
		}
		if !slices.Equal(got.Files, want.files) || !slices.Equal(got.Labels, want.labels) {
			t.Fatalf("files %q labels %v,\nwant %q labels %v", got.Files, got.Labels, want.files, want.labels)
		}
		if !slices.Equal(got.Unread, want.unread) {
			t.Fatalf("unread %q, want %q", got.Unread, want.unread)
		}
	})
}

// fuzzTempDir returns the folder FuzzImageFolder builds its trees in: one
// on /dev/shm where that memory file system exists, as a tree costs well
// under a millisecond there against tens of milliseconds on a busy disk.
func fuzzTempDir(f *testing.F) string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "vit-train-fuzz-"); err == nil {
			f.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return f.TempDir()
}

func dedupe(files []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

type listing struct {
	classes []string
	files   []string
	labels  []int
	unread  []string
}

// inFolderOrder sorts paths folder by folder, then by name.
func inFolderOrder(paths []string) {
	sort.Slice(paths, func(i, j int) bool {
		di, dj := filepath.Dir(paths[i]), filepath.Dir(paths[j])
		if di != dj {
			return di < dj
		}
		return filepath.Base(paths[i]) < filepath.Base(paths[j])
	})
}

// expectedListing is an independent statement of torchvision's rules for
// the tree under root; wantErr says why OpenImageFolder must refuse it.
func expectedListing(root string, isDirAt map[string]bool, files []string) (listing, string) {
	var l listing
	for d := range isDirAt {
		if filepath.Dir(d) == root {
			l.classes = append(l.classes, filepath.Base(d))
		}
	}
	sort.Strings(l.classes)
	if len(l.classes) == 0 {
		return l, "no class folders"
	}
	for label, class := range l.classes {
		prefix := filepath.Join(root, class) + string(filepath.Separator)
		var mine, other []string
		for _, f := range files {
			if !strings.HasPrefix(f, prefix) {
				continue
			}
			switch strings.ToLower(filepath.Ext(f)) {
			case ".png", ".jpg", ".jpeg":
				mine = append(mine, f)
			case ".avif", ".bmp", ".gif", ".heic", ".heif", ".jxl", ".pgm", ".ppm", ".tif", ".tiff", ".webp":
				other = append(other, f)
			}
		}
		if len(mine) == 0 {
			return l, "an empty class " + class
		}
		inFolderOrder(mine)
		inFolderOrder(other)
		for _, f := range mine {
			l.files = append(l.files, f)
			l.labels = append(l.labels, label)
		}
		l.unread = append(l.unread, other...)
	}
	return l, ""
}

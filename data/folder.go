package data

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/vit-train/vit-train/augment"
)

// FolderOptions configures OpenImageFolder.
type FolderOptions struct {
	// SkipCorrupt makes Item replace an unreadable or corrupt file by the
	// next readable one (in index order) instead of failing; the skipped
	// files are counted and listed by Skipped and SkipReport.
	SkipCorrupt bool
	// MaxPixels bounds width*height of a decoded image (0: DefaultMaxPixels).
	MaxPixels int
	// Extensions lists the accepted lower-case file suffixes
	// (nil: .jpg, .jpeg, .png); matching ignores case.
	Extensions []string
}

// DefaultExtensions returns the file suffixes OpenImageFolder accepts by
// default: .jpg, .jpeg and .png (a new slice each call).
func DefaultExtensions() []string { return []string{".jpg", ".jpeg", ".png"} }

// otherImageExtensions are the suffixes of image formats that DecodeImage
// does not read (torchvision's ImageFolder takes some of them): files
// with them are listed in ImageFolder.Unread rather than left out
// unannounced.
var otherImageExtensions = []string{".avif", ".bmp", ".gif", ".heic", ".heif", ".jxl", ".pgm", ".ppm", ".tif", ".tiff", ".webp"}

// ImageFolder is a dataset of image files sorted into one sub-folder per
// class (root/<class>/**/<file>), as torchvision's ImageFolder: classes are
// the sub-folder names sorted, files are listed folder by folder in sorted
// order (symbolic links followed). Images are decoded on each Item call to
// (3, H, W) RGB.
type ImageFolder struct {
	Root   string   // the folder holding the class folders
	Files  []string // (N,) file paths
	Labels []int    // (N,) class indices
	// Unread are the image files under Root of other formats than
	// Extensions' (BMP, GIF, HEIC, TIFF, WebP, …, by suffix), left out of
	// the set, in the order Files would list them.
	Unread []string

	classes []string
	opt     FolderOptions

	mu      sync.Mutex
	skipped map[int]error
}

// SkippedFile is a file ImageFolder could not use.
type SkippedFile struct {
	Path string // the file
	Err  error  // why it was skipped
}

// OpenImageFolderSplit opens split Train (root/train) or Test (root/val)
// of a tree of image folders, as ImageNet's is laid out: each an
// OpenImageFolder of class folders. The split's folder may also have
// another of the names SplitFolderNames lists. Where root has none, the
// error is a *MissingSplitError.
func OpenImageFolderSplit(root string, split Split, opt FolderOptions) (*ImageFolder, error) {
	if err := split.check(); err != nil {
		return nil, err
	}
	dir, err := SplitFolder(root, split)
	if err != nil {
		return nil, err
	}
	return OpenImageFolder(dir, opt)
}

// SplitFolderNames returns the names a split's folder may have, in the
// order SplitFolder tries them: timm's (train, training; val, valid,
// validation, eval, evaluation) and, for Test, test (a new slice each
// call).
func SplitFolderNames(split Split) []string {
	if split == Test {
		return []string{"val", "valid", "validation", "eval", "evaluation", "test"}
	}
	return []string{"train", "training"}
}

// IsSplitFolderName reports whether a folder called name would be taken
// for a split's (SplitFolderNames, in any case).
func IsSplitFolderName(name string) bool {
	for _, split := range []Split{Train, Test} {
		for _, n := range SplitFolderNames(split) {
			if strings.EqualFold(name, n) {
				return true
			}
		}
	}
	return false
}

// SplitFolder returns the folder of split under root: the first of
// SplitFolderNames(split) that root holds as a folder, in that case or,
// failing that, in another ("Train/"). Where there is none, the error is
// a *MissingSplitError.
func SplitFolder(root string, split Split) (string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return "", fmt.Errorf("data: image folder: %w", err)
	}
	for _, name := range SplitFolderNames(split) {
		for _, exact := range []bool{true, false} {
			for _, e := range entries {
				p := filepath.Join(root, e.Name())
				if (e.Name() == name || !exact && strings.EqualFold(e.Name(), name)) && isDir(p, e) {
					return p, nil
				}
			}
		}
	}
	return "", &MissingSplitError{Root: root, Split: split}
}

// MissingSplitError is a tree of image folders without a split's folder.
type MissingSplitError struct {
	Root  string
	Split Split
}

func (e *MissingSplitError) Error() string {
	return fmt.Sprintf("data: image folder %s: no folder for the %s split (%s)", e.Root, e.Split, e.Tried())
}

// Tried lists the folder names looked for: "train/ or training/".
func (e *MissingSplitError) Tried() string {
	names := SplitFolderNames(e.Split)
	return strings.Join(names[:len(names)-1], "/, ") + "/ or " + names[len(names)-1] + "/"
}

// OpenImageFolder lists root's class folders and their image files. It fails
// when root has no class folder or a class folder has no image file.
func OpenImageFolder(root string, opt FolderOptions) (*ImageFolder, error) {
	if opt.Extensions == nil {
		opt.Extensions = DefaultExtensions()
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("data: image folder: %w", err)
	}
	f := &ImageFolder{Root: root, opt: opt, skipped: map[int]error{}}
	for _, e := range entries {
		if isDir(filepath.Join(root, e.Name()), e) {
			f.classes = append(f.classes, e.Name())
		}
	}
	sort.Strings(f.classes)
	if len(f.classes) == 0 {
		return nil, fmt.Errorf("data: image folder %s: no class folders", root)
	}
	for label, class := range f.classes {
		files, unread, err := listImages(filepath.Join(root, class), opt.Extensions)
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("data: image folder %s: class folder %q holds no image files (%s)%s", root, class, strings.Join(opt.Extensions, ", "), unreadHint(unread))
		}
		for _, p := range files {
			f.Files = append(f.Files, p)
			f.Labels = append(f.Labels, label)
		}
		f.Unread = append(f.Unread, unread...)
	}
	return f, nil
}

// unreadHint ends the message about a class folder with no usable file:
// the image files of other formats it holds, if any.
func unreadHint(unread []string) string {
	if len(unread) == 0 {
		return ""
	}
	return fmt.Sprintf("; it holds %d of other formats (%s), which are not read: convert them to JPEG or PNG", len(unread), CountBySuffix(unread))
}

// UnreadNote is a line saying that files, image files of formats that
// are not decoded (ImageFolder.Unread), are left out of what where names,
// counted by suffix, the first three named; "" for no files.
func UnreadNote(where string, files []string) string {
	if len(files) == 0 {
		return ""
	}
	const shown = 3
	examples := strings.Join(files[:min(len(files), shown)], ", ")
	if len(files) > shown {
		examples += ", …"
	}
	if len(files) == 1 {
		return fmt.Sprintf("%s: 1 image file of a format vit-train does not read (%s) is left out; convert it to JPEG or PNG to use it: %s", where, CountBySuffix(files), examples)
	}
	return fmt.Sprintf("%s: %d image files of formats vit-train does not read (%s) are left out; convert them to JPEG or PNG to use them: %s", where, len(files), CountBySuffix(files), examples)
}

// ImageFiles returns the image files under dir that an image folder
// reads by default (DefaultExtensions), folder by folder in sorted path
// order and sorted within each folder, and in the same order those of
// other image formats, which it leaves out (as ImageFolder.Unread).
func ImageFiles(dir string) (files, unread []string, err error) {
	return listImages(dir, DefaultExtensions())
}

// CountBySuffix describes how many of files have each suffix, in lower
// case: ".tif: 1, .webp: 3", suffixes sorted.
func CountBySuffix(files []string) string {
	count := map[string]int{}
	for _, p := range files {
		count[strings.ToLower(filepath.Ext(p))]++
	}
	suffixes := make([]string, 0, len(count))
	for e := range count {
		suffixes = append(suffixes, e)
	}
	sort.Strings(suffixes)
	parts := make([]string, len(suffixes))
	for i, e := range suffixes {
		parts[i] = fmt.Sprintf("%s: %d", e, count[e])
	}
	return strings.Join(parts, ", ")
}

// isDir reports whether the entry is a folder or a link to one.
func isDir(p string, e os.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&os.ModeSymlink != 0 {
		st, err := os.Stat(p)
		return err == nil && st.IsDir()
	}
	return false
}

// maxFolderDepth bounds the recursion into class folders (link cycles).
const maxFolderDepth = 32

// listImages returns the image files under dir with one of exts'
// suffixes, grouped by folder with folders in sorted path order and files
// sorted within each folder (torchvision's sorted(os.walk(dir,
// followlinks=True))), and in the same order those of other image
// formats (otherImageExtensions).
func listImages(dir string, exts []string) (files, unread []string, err error) {
	byDir, unreadByDir := map[string][]string{}, map[string][]string{}
	var walk func(d string, depth int) error
	walk = func(d string, depth int) error {
		if depth > maxFolderDepth {
			return fmt.Errorf("data: image folder: %s: folders nested more than %d deep (link cycle?)", d, maxFolderDepth)
		}
		entries, err := os.ReadDir(d)
		if err != nil {
			return fmt.Errorf("data: image folder: %w", err)
		}
		for _, e := range entries {
			p := filepath.Join(d, e.Name())
			if isDir(p, e) {
				if err := walk(p, depth+1); err != nil {
					return err
				}
				continue
			}
			switch {
			case hasExt(e.Name(), exts):
				byDir[d] = append(byDir[d], e.Name())
			case hasExt(e.Name(), otherImageExtensions):
				unreadByDir[d] = append(unreadByDir[d], e.Name())
			}
		}
		return nil
	}
	if err := walk(dir, 0); err != nil {
		return nil, nil, err
	}
	return sortedPaths(byDir), sortedPaths(unreadByDir), nil
}

// sortedPaths lists the files of byDir (folder → file names), folders in
// sorted order and files sorted within each.
func sortedPaths(byDir map[string][]string) []string {
	dirs := make([]string, 0, len(byDir))
	for d := range byDir {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	var files []string
	for _, d := range dirs {
		names := byDir[d]
		sort.Strings(names)
		for _, n := range names {
			files = append(files, filepath.Join(d, n))
		}
	}
	return files
}

func hasExt(name string, exts []string) bool {
	lower := strings.ToLower(name)
	for _, e := range exts {
		if strings.HasSuffix(lower, e) {
			return true
		}
	}
	return false
}

// LabelBy labels f's files by classes, the classes of the split f is
// scored against (a training split's, for a validation split that lacks
// some of them): a file's label becomes the index of its class folder's
// name in classes, and Classes returns classes. A class folder that
// classes does not name is an error, which names it; f is then
// unchanged.
func (f *ImageFolder) LabelBy(classes []string) error {
	index := make(map[string]int, len(classes))
	for i, c := range classes {
		index[c] = i
	}
	to := make([]int, len(f.classes))
	var unknown []string
	for i, c := range f.classes {
		j, ok := index[c]
		if !ok {
			unknown = append(unknown, c)
		}
		to[i] = j
	}
	if len(unknown) > 0 {
		return fmt.Errorf("data: image folder %s: class folders %q are not among the %d classes it is scored against", f.Root, unknown, len(classes))
	}
	for i, l := range f.Labels {
		f.Labels[i] = to[l]
	}
	f.classes = slices.Clone(classes)
	return nil
}

// Len returns the number of files.
func (f *ImageFolder) Len() int { return len(f.Files) }

// Classes returns the class folder names, sorted.
func (f *ImageFolder) Classes() []string { return f.classes }

// Label returns file i's class index.
func (f *ImageFolder) Label(i int) int { return f.Labels[i] }

// Shape returns (3, 0, 0): RGB images of varying size.
func (f *ImageFolder) Shape() (c, h, w int) { return 3, 0, 0 }

// Item decodes file i. With SkipCorrupt, a file that cannot be read or
// decoded is recorded and replaced by the next usable file.
func (f *ImageFolder) Item(i int) (augment.Image, int, error) {
	n := len(f.Files)
	if i < 0 || i >= n {
		return augment.Image{}, 0, fmt.Errorf("data: image folder %s: index %d outside [0, %d)", f.Root, i, n)
	}
	for k := 0; k < n; k++ {
		j := (i + k) % n
		if f.opt.SkipCorrupt && f.isSkipped(j) {
			continue
		}
		img, err := f.load(j)
		if err == nil {
			return img, f.Labels[j], nil
		}
		if !f.opt.SkipCorrupt {
			return augment.Image{}, 0, fmt.Errorf("item %d: %w", j, err)
		}
		f.skip(j, err)
	}
	return augment.Image{}, 0, fmt.Errorf("data: image folder %s: no readable image (%d files skipped)", f.Root, n)
}

func (f *ImageFolder) load(j int) (augment.Image, error) {
	b, err := os.ReadFile(f.Files[j])
	if err != nil {
		return augment.Image{}, fmt.Errorf("data: %w", err)
	}
	return DecodeImage(b, f.Files[j], f.opt.MaxPixels)
}

func (f *ImageFolder) isSkipped(j int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.skipped[j]
	return ok
}

func (f *ImageFolder) skip(j int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.skipped[j] = err
}

// Skipped returns the files skipped so far, in index order.
func (f *ImageFolder) Skipped() []SkippedFile {
	f.mu.Lock()
	defer f.mu.Unlock()
	idx := make([]int, 0, len(f.skipped))
	for j := range f.skipped {
		idx = append(idx, j)
	}
	sort.Ints(idx)
	out := make([]SkippedFile, len(idx))
	for k, j := range idx {
		out[k] = SkippedFile{Path: f.Files[j], Err: f.skipped[j]}
	}
	return out
}

// SkipReport summarises the skipped files ("" when none): their count and
// one line per file with its error.
func (f *ImageFolder) SkipReport() string {
	sk := f.Skipped()
	if len(sk) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d files in %s skipped as unreadable or corrupt:\n", len(sk), len(f.Files), f.Root)
	for _, s := range sk {
		fmt.Fprintf(&b, "  %v\n", s.Err)
	}
	return b.String()
}

// Check reads and decodes every file of the folder, workers at a time,
// and returns those that cannot be used, in index order, with why: what
// Item would fail on (or skip), found before a run rather than during it.
func (f *ImageFolder) Check(workers int) []SkippedFile {
	errs := make([]error, len(f.Files))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				_, errs[j] = f.load(j)
			}
		}()
	}
	for j := range f.Files {
		next <- j
	}
	close(next)
	wg.Wait()
	var bad []SkippedFile
	for j, err := range errs {
		if err != nil {
			bad = append(bad, SkippedFile{Path: f.Files[j], Err: err})
		}
	}
	return bad
}

// FolderOf returns the ImageFolder ds is, or draws from (a Subset of
// one); false when it is none.
func FolderOf(ds Dataset) (*ImageFolder, bool) {
	for {
		if f, ok := ds.(*ImageFolder); ok {
			return f, true
		}
		w, ok := ds.(interface{ Unwrap() Dataset })
		if !ok {
			return nil, false
		}
		ds = w.Unwrap()
	}
}

package train

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/data"
)

// writeImageFolder writes an ImageNet-style folder of 8×8 RGB PNGs:
// root/{train,val}/classK/N.png, perClass[0] training and perClass[1]
// validation images for each of classes classes, their colour by class.
func writeImageFolder(t *testing.T, classes int, perClass [2]int) string {
	t.Helper()
	root := t.TempDir()
	for si, split := range []string{"train", "val"} {
		for c := range classes {
			dir := filepath.Join(root, split, fmt.Sprintf("class%d", c))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for i := range perClass[si] {
				img := image.NewRGBA(image.Rect(0, 0, 8, 8))
				for y := range 8 {
					for x := range 8 {
						img.Set(x, y, color.RGBA{uint8(255 * c / classes), uint8(8*x + i), uint8(8 * y), 255})
					}
				}
				var b bytes.Buffer
				if err := png.Encode(&b, img); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.png", i)), b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return root
}

// folderConfig is a one-epoch run of a tiny ViT on the image folder at root.
func folderConfig(t *testing.T, root string, sets ...string) Config {
	t.Helper()
	base := []string{"data.dataset=imagefolder", "data.root=" + root, "data.batch_size=4", "data.eval_batch_size=4",
		"data.workers=1", "epochs=1", "progress=false", "log_every=1", "model.name=vit_cifar_patch4_32",
		"model.img_size=8", "model.embed_dim=16", "model.depth=1", "model.num_heads=2", "model.drop_path_rate=0"}
	cfg, err := loadConfig("", append(base, sets...))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestSkipCorruptIsReported checks that a run with data.skip_corrupt says
// which files it skipped, why, and how many, and lists them in the run
// folder.
func TestSkipCorruptIsReported(t *testing.T) {
	root := writeImageFolder(t, 2, [2]int{4, 2})
	bad := []string{filepath.Join(root, "train", "class0", "1.png"), filepath.Join(root, "val", "class1", "0.png")}
	for _, p := range bad {
		if err := os.WriteFile(p, []byte("not a PNG"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := folderConfig(t, root, "data.skip_corrupt=true", "model.num_classes=2")
	dir := t.TempDir()
	var out bytes.Buffer
	if _, err := Run(context.Background(), cfg, Options{Dir: dir, Out: &out}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	listed, err := os.ReadFile(filepath.Join(dir, SkippedList))
	if err != nil {
		t.Fatalf("no list of skipped files in the run folder: %v\n%s", err, out.String())
	}
	for _, text := range []string{out.String(), string(listed)} {
		for _, p := range bad {
			if !strings.Contains(text, p) {
				t.Errorf("%s is not named:\n%s", p, text)
			}
		}
		if !strings.Contains(text, "1 of 8 files") || !strings.Contains(text, "1 of 4 files") {
			t.Errorf("the counts are not given:\n%s", text)
		}
	}
	if !strings.Contains(out.String(), "2 unreadable file(s) skipped") {
		t.Errorf("the total is not printed:\n%s", out.String())
	}
}

// TestSubsetsCoverTheClasses checks that data.train_subset and
// data.eval_subset of a class-sorted folder hold every class, not the
// first class's files.
func TestSubsetsCoverTheClasses(t *testing.T) {
	root := writeImageFolder(t, 4, [2]int{5, 3})
	ds, err := OpenDatasets(DataConfig{Dataset: "imagefolder", Root: root, TrainSubset: 8, EvalSubset: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, split := range []struct {
		name     string
		data     data.Dataset
		n, class int // images in all, of each class
	}{{"train", ds.Train, 8, 2}, {"eval", ds.Eval, 4, 1}} {
		if split.data.Len() != split.n {
			t.Fatalf("%s subset holds %d images, want %d", split.name, split.data.Len(), split.n)
		}
		count := map[int]int{}
		for i := range split.n {
			_, l, err := split.data.Item(i)
			if err != nil {
				t.Fatal(err)
			}
			count[l]++
		}
		for c := range 4 {
			if count[c] != split.class {
				t.Errorf("%s subset: class %d has %d images, want %d (%v)", split.name, c, count[c], split.class, count)
			}
		}
	}
}

// TestResumeOfAFinishedRun checks that resuming a run that trained all
// its epochs is refused with the run's results, and that training it
// longer, as the message says, works.
func TestResumeOfAFinishedRun(t *testing.T) {
	root := writeImageFolder(t, 2, [2]int{4, 2})
	cfg := folderConfig(t, root, "model.num_classes=2")
	dir := t.TempDir()
	sum, err := Run(context.Background(), cfg, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), cfg, Options{Dir: dir, Resume: true})
	want := []string{"is finished", "all 1 epoch (epochs = 1)", fmt.Sprintf("last top-1 %.2f%%", sum.Last.Top1),
		fmt.Sprintf("best top-1 %.2f%% at epoch 1", sum.State.BestTop1), "--set epochs=N, N > 1"}
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Fatalf("resuming a finished run: %v; want %q in it", err, w)
		}
	}
	cfg.Epochs = 2
	sum, err = Run(context.Background(), cfg, Options{Dir: dir, Resume: true})
	if err != nil || sum.State.Epoch != 2 {
		t.Fatalf("training the finished run longer: %v", err)
	}
}

// TestModelTakesTheDataChannelsAndClasses checks that a ViT preset takes
// the channels and class count of an image folder unless they are set.
func TestModelTakesTheDataChannelsAndClasses(t *testing.T) {
	root := writeImageFolder(t, 3, [2]int{4, 1})
	for _, name := range []string{"vit_cifar_patch4_32", "vit_fmnist_patch4_28"} {
		cfg := folderConfig(t, root, "model.name="+name, "model.img_size=0")
		dir := t.TempDir()
		var out bytes.Buffer
		sum, err := Run(context.Background(), cfg, Options{Dir: dir, Out: &out})
		if err != nil {
			t.Fatalf("%s on a folder of 3 classes of RGB images: %v\n%s", name, err, out.String())
		}
		if sum.State.Epoch != 1 || !strings.Contains(out.String(), "model.num_classes = 3 (the model's 10)") {
			t.Errorf("%s: no note of the classes taken from the data:\n%s", name, out.String())
		}
		ck, err := LoadCheckpoint(filepath.Join(dir, LastCheckpoint))
		if err != nil {
			t.Fatal(err)
		}
		if ch, _ := ck.Spec.Input(); ch != 3 || ck.Spec.NumClasses() != 3 || ck.Config.Model.NumClasses != 3 || (name == "vit_fmnist_patch4_28") != (ck.Config.Model.Channels == 3) {
			t.Errorf("%s: the checkpoint's model takes %d channels, %d classes; its config %+v", name, ch, ck.Spec.NumClasses(), ck.Config.Model)
		}
	}
	// A count that is set is kept, and must fit the data.
	cfg := folderConfig(t, root, "model.num_classes=5")
	if _, err := Run(context.Background(), cfg, Options{Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "has 5 classes (num_classes) but the data (data.dataset = imagefolder) has 3") {
		t.Errorf("model.num_classes=5 on 3 classes: %v", err)
	}
}

// TestImageFolderNamesDataRoot checks that an image folder that is not set
// or not there is an error naming data.root.
func TestImageFolderNamesDataRoot(t *testing.T) {
	if _, err := OpenDatasets(DataConfig{Dataset: "imagefolder"}); err == nil || !strings.Contains(err.Error(), "data.root, which is not set") {
		t.Errorf("imagefolder without data.root: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "photos")
	if _, err := OpenDatasets(DataConfig{Dataset: "imagefolder", Root: missing}); err == nil || !strings.Contains(err.Error(), "data.root = "+missing) {
		t.Errorf("imagefolder at a missing data.root: %v", err)
	}
}

// TestCheckDataNamesEveryBadFile checks that CheckData names every
// unreadable file of both splits at once, and fails unless
// data.skip_corrupt is set.
func TestCheckDataNamesEveryBadFile(t *testing.T) {
	root := writeImageFolder(t, 2, [2]int{3, 2})
	var out bytes.Buffer
	if err := CheckData(DataConfig{Dataset: "imagefolder", Root: root, Workers: 2}, &out); err != nil || !strings.Contains(out.String(), "all 10 files") {
		t.Fatalf("a good folder: %v\n%s", err, out.String())
	}
	bad := []string{filepath.Join(root, "train", "class0", "0.png"), filepath.Join(root, "train", "class1", "2.png"), filepath.Join(root, "val", "class0", "1.png")}
	for _, p := range bad {
		if err := os.WriteFile(p, []byte("not an image"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, skip := range []bool{false, true} {
		out.Reset()
		err := CheckData(DataConfig{Dataset: "imagefolder", Root: root, Workers: 2, SkipCorrupt: skip, TrainSubset: 2}, &out)
		if skip != (err == nil) || !strings.Contains(out.String(), "3 of the 10 files") {
			t.Errorf("skip_corrupt %t: %v\n%s", skip, err, out.String())
		}
		for _, p := range bad {
			if !strings.Contains(out.String(), p) {
				t.Errorf("%s is not named:\n%s", p, out.String())
			}
		}
	}
}

// TestUnreadImagesAreNoted checks that image files of formats that are
// not decoded are named in a note, once each, by a run, by prepare's
// source (Datasets.UnreadNote) and with a held-out split; a folder with
// none gets no note.
func TestUnreadImagesAreNoted(t *testing.T) {
	root := writeImageFolder(t, 2, [2]int{3, 1})
	d, err := OpenDatasets(DataConfig{Dataset: "imagefolder", Root: root})
	if err != nil || d.UnreadNote() != "" {
		t.Fatalf("a folder of PNGs: note %q, %v", d.UnreadNote(), err)
	}
	webp := filepath.Join(root, "train", "class1", "phone.webp")
	tif := filepath.Join(root, "val", "class0", "scan.TIF")
	for _, p := range []string{webp, tif} {
		if err := os.WriteFile(p, []byte("not decoded"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, valSplit := range []float64{0, 0.5} {
		d, err := OpenDatasets(DataConfig{Dataset: "imagefolder", Root: root, ValSplit: valSplit, ValSeed: 1})
		if err != nil {
			t.Fatal(err)
		}
		note := d.UnreadNote()
		want := "data.root = " + root + ": 2 image files of formats vit-train does not read (.tif: 1, .webp: 1) are left out; convert them to JPEG or PNG to use them: " + webp + ", " + tif
		if valSplit > 0 {
			// Both parts are views of train/: its file, once.
			want = "data.root = " + root + ": 1 image file of a format vit-train does not read (.webp: 1) is left out; convert it to JPEG or PNG to use it: " + webp
		}
		if note != want {
			t.Errorf("data.val_split = %v: note\n%q\nwant\n%q", valSplit, note, want)
		}
	}
	var out bytes.Buffer
	if _, err := Run(context.Background(), folderConfig(t, root), Options{Dir: t.TempDir(), Out: &out}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "note: data.root = "+root+": 2 image files"); n != 1 {
		t.Errorf("a run printed the note %d times:\n%s", n, out.String())
	}
}

// TestImageFolderSplits checks the split folders' other names, that a
// data.root of class folders trains with data.val_split and otherwise
// says how to, and that a data.root without a validation folder says how
// to validate; a run on held-out images says so in its summary.
func TestImageFolderSplits(t *testing.T) {
	root := writeImageFolder(t, 2, [2]int{4, 2})
	for from, to := range map[string]string{"train": "Training", "val": "validation"} {
		if err := os.Rename(filepath.Join(root, from), filepath.Join(root, to)); err != nil {
			t.Fatal(err)
		}
	}
	d, err := OpenDatasets(DataConfig{Dataset: "imagefolder", Root: root})
	if err != nil || d.Train.Len() != 8 || d.Eval.Len() != 4 {
		t.Fatalf("Training/ and validation/: %v", err)
	}

	// Only a training split.
	if err := os.RemoveAll(filepath.Join(root, "validation")); err != nil {
		t.Fatal(err)
	}
	_, err = OpenDatasets(DataConfig{Dataset: "imagefolder", Root: root})
	if err == nil || !strings.Contains(err.Error(), "data.root = "+root+" has a training split but no folder for the test split (val/, valid/, validation/, eval/, evaluation/ or test/): set data.val_split=0.1") {
		t.Errorf("no validation folder: %v", err)
	}

	// The class folders themselves.
	flat := filepath.Join(root, "Training")
	_, err = OpenDatasets(DataConfig{Dataset: "imagefolder", Root: flat})
	if err == nil || !strings.Contains(err.Error(), "data.root = "+flat+" holds class folders (class0, class1), not train/ and val/: set data.val_split=0.1") {
		t.Errorf("class folders without data.val_split: %v", err)
	}
	d, err = OpenDatasets(DataConfig{Dataset: "imagefolder", Root: flat, ValSplit: 0.25, ValSeed: 1})
	if err != nil || d.Train.Len() != 6 || d.Eval.Len() != 2 || len(d.Classes) != 2 {
		t.Fatalf("class folders with data.val_split = 0.25: %v", err)
	}
	var out bytes.Buffer
	if _, err := Run(context.Background(), folderConfig(t, flat, "data.val_split=0.25"), Options{Dir: t.TempDir(), Out: &out}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\nheld-out accuracy ") || !strings.Contains(out.String(), "the 2 images scored were held out of the training set by data.val_split = 0.25") {
		t.Errorf("the summary of a run on held-out images:\n%s", out.String())
	}

	// A folder named as a split is not taken for a class.
	if err := os.Rename(filepath.Join(flat, "class1", "0.png"), filepath.Join(flat, "0.png")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(flat, "val"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(flat, "0.png"), filepath.Join(flat, "val", "0.png")); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenDatasets(DataConfig{Dataset: "imagefolder", Root: flat, ValSplit: 0.25}); err == nil || strings.Contains(err.Error(), "holds class folders") {
		t.Errorf("class folders beside val/: %v", err)
	}
}

// TestValidationClassesByName checks that a validation folder lacking a
// training class labels its images by the training classes' names, not
// by its own folders' order, and that one holding a class the training
// folder lacks is an error naming it.
func TestValidationClassesByName(t *testing.T) {
	root := writeImageFolder(t, 3, [2]int{2, 2})
	if err := os.RemoveAll(filepath.Join(root, "val", "class1")); err != nil {
		t.Fatal(err)
	}
	d, err := OpenDatasets(DataConfig{Dataset: "imagefolder", Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Eval.Classes(); !slices.Equal(got, []string{"class0", "class1", "class2"}) {
		t.Errorf("validation classes %q", got)
	}
	f, _ := data.FolderOf(d.Eval)
	for i, file := range f.Files {
		_, label, err := d.Eval.Item(i)
		if want := int(filepath.Base(filepath.Dir(file))[len("class")] - '0'); err != nil || label != want {
			t.Errorf("%s: label %d, %v; want %d", file, label, err, want)
		}
	}
	extra := filepath.Join(root, "val", "class9")
	if err := os.Rename(filepath.Join(root, "val", "class2"), extra); err != nil {
		t.Fatal(err)
	}
	_, err = OpenDatasets(DataConfig{Dataset: "imagefolder", Root: root})
	if err == nil || !strings.Contains(err.Error(), "data.root = "+root+": the validation folder holds classes the training folder does not") || !strings.Contains(err.Error(), `["class9"]`) {
		t.Errorf("a validation class not trained on: %v", err)
	}
}

// TestOneClassIsAnError checks that a data set of one class, on which a
// classifier learns nothing, is refused.
func TestOneClassIsAnError(t *testing.T) {
	root := writeImageFolder(t, 1, [2]int{2, 1})
	_, err := OpenDatasets(DataConfig{Dataset: "imagefolder", Root: root})
	if err == nil || !strings.Contains(err.Error(), "data.root = "+root+" (data.dataset = imagefolder) holds 1 class (class0): a classifier needs two or more") {
		t.Errorf("one class: %v", err)
	}
}

// TestResNetOnAnImageFolderNeedsASize checks that a ResNet, which takes
// its image size from the data, asks for one on an image folder, whose
// images differ in size, and trains once it has one.
func TestResNetOnAnImageFolderNeedsASize(t *testing.T) {
	root := writeImageFolder(t, 2, [2]int{4, 2})
	cfg := folderConfig(t, root, "model.name=resnet20", "model.img_size=0", "model.embed_dim=0", "model.depth=0", "model.num_heads=0")
	_, err := Run(context.Background(), cfg, Options{Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "model resnet20 takes its image size from the data, but the images of data.dataset = imagefolder differ in size: set --img-size N") {
		t.Errorf("resnet20 on an image folder without model.img_size: %v", err)
	}
	cfg = folderConfig(t, root, "model.name=resnet20", "model.img_size=8", "model.embed_dim=0", "model.depth=0", "model.num_heads=0")
	if _, err := Run(context.Background(), cfg, Options{Dir: t.TempDir()}); err != nil {
		t.Errorf("resnet20 at 8 px: %v", err)
	}
}

// TestCheckpointClassesMatchTheData checks that evaluating a checkpoint,
// or distilling from it, on data that labels one of its classes
// otherwise (a class folder renamed so that it sorts elsewhere) is an
// error naming the class, and that the same classes pass.
func TestCheckpointClassesMatchTheData(t *testing.T) {
	root := writeImageFolder(t, 3, [2]int{4, 2})
	dir := t.TempDir()
	if _, err := Run(context.Background(), folderConfig(t, root), Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(dir, LastCheckpoint)
	if _, err := OpenEval(ck, EvalOptions{}); err != nil {
		t.Fatalf("the checkpoint on its own data: %v", err)
	}
	for _, split := range []string{"train", "val"} {
		if err := os.Rename(filepath.Join(root, split, "class0"), filepath.Join(root, split, "class9")); err != nil {
			t.Fatal(err)
		}
	}
	want := `labels class "class1" 1, and the data (data.dataset = imagefolder, data.root = ` + root + `) labels it 0`
	if _, err := OpenEval(ck, EvalOptions{}); err == nil || !strings.Contains(err.Error(), "checkpoint "+ck+" "+want) {
		t.Errorf("eval on renamed classes: %v", err)
	}
	student := folderConfig(t, root, "model.name=deit_cifar_distilled_patch4_32", "distill.type=hard", "distill.teacher="+ck)
	if _, err := Run(context.Background(), student, Options{Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "distill.teacher "+ck+" "+want) {
		t.Errorf("a teacher of other classes: %v", err)
	}
}

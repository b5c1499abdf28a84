package train

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/distill"
	"github.com/vit-train/vit-train/formats/metrics"
	"github.com/vit-train/vit-train/formats/npy"
	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/resnet"
	"github.com/vit-train/vit-train/train/checkpoint"
)

func TestDistillConfigErrors(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"distill.type=soft"}, "needs distill.teacher"},
		{[]string{"distill.teacher=x.safetensors"}, "distill.type = none"},
		{[]string{"distill.type=hard", "distill.teacher=a", "distill.teacher_logits=b"}, "not both"},
		{[]string{"distill.type=hard", "distill.teacher=a", "distill.alpha=1.5"}, "distill.alpha"},
		{[]string{"model.name=resnet20", "model.drop_rate=0.1"}, "apply to ViTs only"},
		{[]string{"model.name=resnet20", "distill.type=hard", "distill.teacher=a"}, "no distillation head"},
	} {
		if _, err := loadConfig("", c.sets); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: want an error containing %q, got %v", c.sets, c.want, err)
		}
	}
}

// tinyResNet trains resnet20 for one epoch on 64 embedded images.
func tinyResNet(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cfg := smallConfig(t, "model.name=resnet20", "model.drop_path_rate=0", "epochs=1", "data.train_subset=64",
		"data.batch_size=16", "data.eval_subset=64", "data.eval_batch_size=32", "optim.name=sgd", "optim.lr=0.1")
	if _, err := Run(context.Background(), cfg, Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, LastCheckpoint)
}

// TestResNetResumeIsExact interrupts a ResNet run mid-epoch and resumes it:
// the loss curve, the weights and the batch norms' running statistics equal
// those of an uninterrupted run.
func TestResNetResumeIsExact(t *testing.T) {
	cfg := smallConfig(t, "model.name=resnet20", "model.drop_path_rate=0", "data.train_subset=64", "data.batch_size=16",
		"data.eval_subset=32", "data.eval_batch_size=32", "aug.mixup=0.8", "optim.name=sgd", "optim.lr=0.05")
	full, split := t.TempDir(), t.TempDir()
	if _, err := Run(context.Background(), cfg, Options{Dir: full}); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), cfg, Options{Dir: split, Hooks: Hooks{At: StopAfterSteps(6)}}); err != ErrInterrupted {
		t.Fatalf("want an interrupt, got %v", err)
	}
	if _, err := Run(context.Background(), cfg, Options{Dir: split, Resume: true}); err != nil {
		t.Fatal(err)
	}
	a, b := readSteps(t, full), readSteps(t, split)
	if len(a) != 8 || len(b) != 8 {
		t.Fatalf("%d and %d step records, want 8", len(a), len(b))
	}
	for i := range a {
		if a[i]["loss"] != b[i]["loss"] {
			t.Fatalf("step %d: loss %v uninterrupted, %v resumed", i+1, a[i]["loss"], b[i]["loss"])
		}
	}
	ca, err := LoadCheckpoint(filepath.Join(full, LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	cb, err := LoadCheckpoint(filepath.Join(split, LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	if ca.Spec != model.SpecOf(resnet.Config{Arch: "resnet20", Channels: 1, ImageSize: 28, NumClasses: 10}) {
		t.Fatalf("checkpoint spec %+v", ca.Spec)
	}
	stats := 0
	resumed := tensorsByName(cb.Params)
	for _, p := range ca.Params {
		if !slices.Equal(p.Data, resumed[p.Name]) {
			t.Fatalf("tensor %s differs after resuming", p.Name)
		}
		if strings.HasSuffix(p.Name, ".running_var") {
			stats++
			if slices.Equal(p.Data, make([]float32, len(p.Data))) || p.Data[0] == 1 {
				t.Fatalf("%s was not updated: %v", p.Name, p.Data[:3])
			}
		}
	}
	if stats != 21 { // the stem, 9 blocks × 2 and 2 shortcut projections
		t.Fatalf("%d running_var buffers, want 21", stats)
	}
}

// TestDistillFromResNetTeacher distils a ViT from a ResNet checkpoint: the
// teacher runs frozen and stays bit-identical (weights and running statistics), its score
// is that of its own logits, and each loss term is logged.
func TestDistillFromResNetTeacher(t *testing.T) {
	teacherPath := tinyResNet(t)
	cfg := smallConfig(t, "model.name=deit_fmnist_distilled_patch4_28", "epochs=1", "data.train_subset=128",
		"data.eval_subset=64", "data.eval_batch_size=32", "aug.mixup=0.8", "aug.cutmix=1.0",
		"distill.type=hard", "distill.teacher="+teacherPath)
	dir := t.TempDir()
	var log strings.Builder
	tr, err := newTrainer(cfg, Options{Dir: dir, Out: &log})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := tr.run(context.Background())
	tr.close()
	if err != nil {
		t.Fatal(err)
	}
	ck, err := LoadCheckpoint(teacherPath)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.teacher.(*distill.NetTeacher).TrainGraph().Frozen() {
		t.Fatal("the teacher's training-time graph is not frozen")
	}
	after := tr.teacher.(*distill.NetTeacher).Net().Tensors()
	saved := tensorsByName(ck.Params)
	if len(after) != len(saved) {
		t.Fatalf("teacher has %d tensors, its checkpoint %d", len(after), len(saved))
	}
	for _, p := range after {
		if !slices.Equal(p.Data, saved[p.Name]) {
			t.Fatalf("teacher tensor %s changed during distillation", p.Name)
		}
	}
	if sum.Teacher == nil || sum.Teacher.N != 64 {
		t.Fatalf("teacher scored on %+v, want the 64 evaluation images", sum.Teacher)
	}
	if !strings.Contains(log.String(), "distillation hard") || !strings.Contains(log.String(), "dist head") {
		t.Fatalf("log lacks the distillation lines:\n%s", log.String())
	}
	for _, r := range readSteps(t, dir) {
		if !(r["loss_base"] > 0 && r["loss_distill"] > 0) || math.Abs(0.5*r["loss_base"]+0.5*r["loss_distill"]-r["loss"]) > 1e-5 {
			t.Fatalf("step record %v", r)
		}
	}
	// A student of another input size cannot use this teacher.
	other := smallConfig(t, "model.name=deit_fmnist_distilled_patch4_28", "model.img_size=56", "distill.type=hard", "distill.teacher="+teacherPath)
	if _, err := Run(context.Background(), other, Options{Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "image size 28") {
		t.Fatalf("want an input size mismatch error, got %v", err)
	}
	epochs, err := metrics.Read(dir, "epochs")
	if err != nil || len(epochs) != 1 || epochs[0]["teacher_top1"] != sum.Teacher.Top1 || epochs[0]["val_top1_dist"] != sum.Last.DistHead.Top1 {
		t.Fatalf("epoch records %v, %v", epochs, err)
	}
}

// TestDistillFromLogitsFile distils from a .npy of teacher logits and
// rejects files whose N or C do not match.
func TestDistillFromLogitsFile(t *testing.T) {
	teacherPath := tinyResNet(t)
	logits, n, c, err := Logits(teacherPath, data.Train, EvalOptions{Sets: []string{"data.train_subset=128"}})
	if err != nil || n != 128 || c != 10 {
		t.Fatalf("logits: %d×%d, %v", n, c, err)
	}
	tmp := t.TempDir()
	good := filepath.Join(tmp, "teacher.npy")
	if err := npy.WriteFile(good, logits, []int{n, c}); err != nil {
		t.Fatal(err)
	}
	base := []string{"model.name=deit_fmnist_distilled_patch4_28", "epochs=1", "data.train_subset=128", "data.eval_subset=64",
		"data.eval_batch_size=32", "distill.type=soft", "distill.tau=2"}
	cfg := smallConfig(t, append(base, "distill.teacher_logits="+good)...)
	if _, err := Run(context.Background(), cfg, Options{Dir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		data  []float32
		shape []int
		want  string
	}{
		{logits[:(n-1)*c], []int{n - 1, c}, "N = 127"},
		{logits[:n*(c-1)], []int{n, c - 1}, "C = 9"},
		{logits, []int{n * c}, "want (N, C)"},
	} {
		path := filepath.Join(tmp, "bad.npy")
		if err := npy.WriteFile(path, bad.data, bad.shape); err != nil {
			t.Fatal(err)
		}
		cfg := smallConfig(t, append(base, "distill.teacher_logits="+path)...)
		if _, err := Run(context.Background(), cfg, Options{Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("shape %v: want an error naming %s and %q, got %v", bad.shape, path, bad.want, err)
		}
	}
}

func tensorsByName(ts []safetensors.Tensor) map[string][]float32 {
	m := map[string][]float32{}
	for _, t := range ts {
		m[t.Name] = t.Data
	}
	return m
}

// TestTeacherScoreIsTheTeachersOwn scores a teacher whose predictions are
// known without running it: a ResNet whose classifier ignores the features
// (fc.weight 0) and whose bias ranks class j j-th. Its top-1 is the share
// of evaluation images of class 0, its top-5 the share of classes 0–4 and
// its loss logsumexp(bias) − bias[label], from the labels alone.
func TestTeacherScoreIsTheTeachersOwn(t *testing.T) {
	spec := resnet.Config{Arch: "resnet20", Channels: 1, ImageSize: 28, NumClasses: 10}
	net, err := model.New(model.SpecOf(spec), 3)
	if err != nil {
		t.Fatal(err)
	}
	bias := make([]float64, 10)
	for _, p := range net.Tensors() {
		switch p.Name {
		case "fc.weight":
			clear(p.Data)
		case "fc.bias":
			for j := range p.Data {
				p.Data[j] = float32(9 - j)
				bias[j] = float64(9 - j)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "teacher.safetensors")
	fmMean, fmStd := data.FashionMNISTMeanStd()
	ck := &checkpoint.File{Spec: model.SpecOf(spec), Mean: fmMean, Std: fmStd, Params: net.Tensors()}
	if err := ck.Save(path); err != nil {
		t.Fatal(err)
	}
	cfg := tinyConfig(t, "model.name=deit_fmnist_distilled_patch4_28", "data.eval_subset=60", "data.eval_batch_size=25",
		"distill.type=hard", "distill.teacher="+path)
	tr, err := newTrainer(cfg, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.close()
	if err := tr.evaluateTeacher(context.Background()); err != nil {
		t.Fatal(err)
	}
	lse := 0.0
	for _, b := range bias {
		lse += math.Exp(b)
	}
	lse = math.Log(lse)
	var n, class0, top5 int
	var loss float64
	for i := 0; i < tr.ds.Eval.Len(); i++ {
		_, y, err := tr.ds.Eval.Item(i)
		if err != nil {
			t.Fatal(err)
		}
		n++
		if y == 0 {
			class0++
		}
		if y < 5 {
			top5++
		}
		loss += lse - bias[y]
	}
	r := tr.rec.teacher
	if r == nil || r.N != 60 || n != 60 {
		t.Fatalf("teacher scored on %+v, want the 60 evaluation images", r)
	}
	if r.Top1 != 100*float64(class0)/60 || r.Top5 != 100*float64(top5)/60 || math.Abs(r.Loss-loss/60) > 1e-5 {
		t.Fatalf("teacher top-1 %v top-5 %v loss %v, want %v, %v, %v", r.Top1, r.Top5, r.Loss, 100*float64(class0)/60, 100*float64(top5)/60, loss/60)
	}
	for y, row := range r.Confusion {
		for j, v := range row {
			if j != 0 && v != 0 {
				t.Fatalf("class %d predicted as %d: the teacher always predicts 0", y, j)
			}
		}
	}
}
